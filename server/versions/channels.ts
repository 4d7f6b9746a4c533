// Release channels (DESIGN: beyond SPEC, additive). Ordered from the most to the least stable: a
// client asking for a channel also gets every more stable one.
export const CHANNELS = ['release', 'beta', 'alpha'] as const;
export type Channel = (typeof CHANNELS)[number];

/** A record without a channel is a release: data written before channels existed keeps SPEC 2.4's meaning. */
export function channelOf(version: { channel?: Channel | undefined }): Channel {
  return version.channel ?? 'release';
}

/** The channels whose answers include a version of `channel`: its own and every less stable one. */
export function channelsShowing(channel: Channel): readonly Channel[] {
  return CHANNELS.slice(CHANNELS.indexOf(channel));
}

/** A version as people read it in titles: its plugin version, and its channel unless a release (`1.5.0 (beta)`). */
export function versionLabel(version: { pluginVersion: string; channel?: Channel | undefined }): string {
  const channel = channelOf(version);
  return channel === 'release' ? version.pluginVersion : `${version.pluginVersion} (${channel})`;
}
