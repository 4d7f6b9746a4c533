import type { ServerSoftware } from '../versions/software.ts';
import { seenDigest, type Digest } from './digest-set.ts';
import { countField } from './journal-lines.ts';

/** One counted answer: a JAR served whole or in part (GET, 200 or 206) to one client on one UTC day. */
export type Download = {
  /** Days since the Unix epoch, UTC. */
  day: number;
  versionId: string;
  /** The software the URL named (latest, resolve); undefined for a download by id. */
  software: ServerSoftware | undefined;
  /** The client's counting key: an IPv4 address, an IPv6 /64 (clientKey). */
  client: string;
};

/**
 * A download as the store counts it: its day, its count's field, and its seen digest in place of
 * the client (a download counts once per client, version and day).
 */
export type Counted = Digest & { day: number; field: string };

export const countedOf = ({ day, versionId, software, client }: Download): Counted => ({
  ...seenDigest(day, versionId, client),
  day,
  field: countField(versionId, software),
});
