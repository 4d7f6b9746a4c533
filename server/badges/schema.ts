import { z } from 'zod';
import 'zod-openapi';
import { ServerId } from '../charts/schema.ts';
import { ChannelQuery, JavaVersion, ServerSoftwareName } from '../versions/schema.ts';

export const BADGE_FORMATS = ['svg', 'png', 'json'] as const;
export type BadgeFormat = (typeof BADGE_FORMATS)[number];

/** shields.io's styles, all drawn by badge-maker. */
export const BADGE_STYLES = ['flat', 'flat-square', 'plastic', 'for-the-badge', 'social'] as const;

/** The badge's file extension: 404 naming the three when another (a path is not a query). */
export const BadgeFormatName = z
  .enum(BADGE_FORMATS)
  .meta({ description: 'svg: the badge; png: the same badge at twice its size; json: shields.io endpoint JSON' });

export const BadgeQuery = z.object({
  style: z
    .enum(BADGE_STYLES, { error: `must be one of ${BADGE_STYLES.join(', ')}` })
    .default('flat')
    .meta({ description: "shields.io's badge style" }),
});
export const LatestBadgeQuery = BadgeQuery.extend(ChannelQuery.shape);

/** The path of the latest-version badge: a software and maybe a Java version, each 404 when it does not exist (as the latest endpoints). */
export const LatestBadgePath = z.object({ serverSoftware: ServerSoftwareName, javaVersion: JavaVersion.optional() });

/** The path of the players badge: a server id (400 when not a UUID, as the charts) and a format. */
export const PlayersBadgePath = z.object({ id: ServerId, format: z.string() });

/** https://shields.io/badges/endpoint-badge: shields.io draws this with its own style options. */
export const BadgeEndpoint = z
  .object({
    schemaVersion: z.literal(1),
    label: z.string(),
    message: z.string(),
    color: z.string(),
  })
  .meta({
    id: 'BadgeEndpoint',
    description:
      'shields.io endpoint JSON: `https://img.shields.io/endpoint?url=<this URL>` draws the badge with any shields.io style',
  });
export type Badge = Omit<z.infer<typeof BadgeEndpoint>, 'schemaVersion'>;
