/**
 * Like Promise.all, but it waits for every task to end before it rejects with the first failure
 * (in the tasks' order, not in time): no task is still writing when the caller cleans up after it,
 * and the error reported is the same whichever task failed first.
 */
export async function allOrFirstError<T>(tasks: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(tasks);
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((result) => (result as PromiseFulfilledResult<T>).value);
}
