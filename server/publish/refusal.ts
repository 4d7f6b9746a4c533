import { HTTPError } from 'h3';

/**
 * Why a release was refused, as the HTTP API answers it (issue 30, item 4): the CLI prints the
 * message alone, the API also picks its status and names what to fix in the body.
 */
export type Refusal =
  /** 400: a field of the metadata, or the JAR's file name, breaks its rule. */
  | { kind: 'field'; field: string }
  /** 409: the same bytes, or the same version, Java and softwares, are already released. */
  | { kind: 'duplicate'; existingId: string }
  /** 422: the file is not a plugin JAR (not a zip, or without a descriptor). */
  | { kind: 'not-a-jar' }
  /** 404: no version with this id. */
  | { kind: 'unknown-version' }
  /** 409: the version is not in the state the change needs (restoring what is not withdrawn). */
  | { kind: 'conflict' };

const STATUS = {
  field: 400,
  duplicate: 409,
  'not-a-jar': 422,
  'unknown-version': 404,
  conflict: 409,
} as const satisfies Record<Refusal['kind'], number>;

/** The refusal as the one error shape (SPEC 2.9): `{error, field}`, `{error, existingId}` or `{error}`. */
export function refusalError(message: string, refusal: Refusal): HTTPError {
  const { kind, ...data } = refusal;
  return new HTTPError({ status: STATUS[kind], message, data });
}
