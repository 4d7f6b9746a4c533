import { describeIssues } from '../helpers/describe-issues.ts';
import { RETENTION_DAYS, type Sample } from './samples.ts';
import { PlayersBody, SamplesBody } from './schema.ts';
import { DAY } from '../helpers/duration.ts';

/** Clocks drift: a sample may be stamped a little ahead of ours. */
const FUTURE_SLACK_MS = 5 * 60_000;

/**
 * Validates an ingestion body (HTTP or CLI) against the clock: a list of samples, or a one-line
 * reason naming the field. Pure: `now` comes in.
 */
export function samplesFromBody(input: unknown, now: number): { samples: Sample[] } | { error: string } {
  // The shape is chosen by its key, so errors speak of that shape rather than of a union.
  const schema = typeof input === 'object' && input !== null && 'samples' in input ? SamplesBody : PlayersBody;
  const body = schema.safeParse(input);
  if (!body.success) return { error: describeIssues(body.error.issues, 'body') };
  const data = body.data;
  const single = 'players' in data;
  const samples =
    'players' in data
      ? [{ at: now, players: data.players }]
      : data.samples.map((s) => ({ at: Date.parse(s.at), players: s.players }));
  for (const [i, sample] of samples.entries()) {
    const field = single ? 'players' : `samples[${i}].at`;
    if (sample.at > now + FUTURE_SLACK_MS) return { error: `${field} must not be more than 5 minutes in the future` };
    if (sample.at < now - RETENTION_DAYS * DAY)
      return { error: `${field} must be within the last ${RETENTION_DAYS} days` };
  }
  return { samples };
}
