import { DOMParser } from '@xmldom/xmldom';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage, type Storage } from '../server/storage.ts';
import { makeAccounts, makeWorkspace, startTestOrigin, until, type Accounts, type Workspace } from './helpers.ts';

// Issue 17 item 2: badges drawn by badge-maker, read back as SVG, PNG and endpoint JSON over HTTP.

const ctx = {} as { workspace: Workspace; storage: Storage; accounts: Accounts; origin: RunningOrigin };

const get = (path: string, init?: RequestInit) => fetch(ctx.origin.url + path, init);

/** What the badge says: its visible texts (badge-maker draws each twice, shadow and text) and its title. */
async function readSvg(path: string) {
  const response = await get(path);
  assert.is(response.status, 200, path);
  assert.is(response.headers.get('content-type'), 'image/svg+xml', path);
  const svg = new DOMParser().parseFromString(await response.text(), 'image/svg+xml').documentElement!;
  assert.is(svg.nodeName, 'svg', path);
  const texts = Array.from(svg.getElementsByTagName('text'))
    .filter((text) => text.getAttribute('aria-hidden') !== 'true')
    .map((text) => text.textContent);
  return {
    texts,
    title: svg.getElementsByTagName('title')[0]?.textContent,
    width: Number(svg.getAttribute('width')),
    height: Number(svg.getAttribute('height')),
    cacheControl: response.headers.get('cache-control'),
  };
}

const badges = suite('badges');
badges.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
  ctx.storage = createFileStorage(ctx.workspace.storageDir);
  ctx.origin = await startTestOrigin(ctx.workspace, { storage: ctx.storage });
});
badges.after(async () => {
  await ctx.origin.close();
  await ctx.storage.dispose();
  await ctx.workspace.remove();
});

badges('latest version per software and per software x Java: SVG label and message, cached as charts', async () => {
  const latest = (await (await get('/api/plugin-versions/latest/papermc')).json()) as {
    version: { pluginVersion: string };
  };
  const badge = await readSvg('/api/badges/latest/papermc.svg');
  assert.equal(badge.texts, ['PaperMC', `v${latest.version.pluginVersion}`]);
  assert.is(badge.title, `PaperMC: v${latest.version.pluginVersion}`);
  assert.is(badge.height, 20);
  assert.is(badge.cacheControl, 'public, max-age=300');
  const java = (await (await get('/api/plugin-versions/latest/velocity/17')).json()) as {
    version: { pluginVersion: string };
  };
  assert.equal((await readSvg('/api/badges/latest/Velocity/17.svg')).texts, [
    'Velocity Java 17',
    `v${java.version.pluginVersion}`,
  ]);
});

badges('endpoint JSON is what shields.io reads, saying what the SVG says', async () => {
  const response = await get('/api/badges/latest/papermc.json');
  assert.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  const json = (await response.json()) as Record<string, unknown>;
  assert.equal(Object.keys(json).sort(), ['color', 'label', 'message', 'schemaVersion']);
  assert.is(json.schemaVersion, 1);
  assert.equal([json.label, json.message], (await readSvg('/api/badges/latest/papermc.svg')).texts);
  assert.is(json.color, 'blue');
});

badges('PNG: the same badge at twice its size, decoded by sharp', async () => {
  const svg = await readSvg('/api/badges/latest/papermc.svg');
  const response = await get('/api/badges/latest/papermc.png');
  assert.is(response.headers.get('content-type'), 'image/png');
  const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
  assert.is(meta.format, 'png');
  assert.equal([meta.width, meta.height], [svg.width * 2, svg.height * 2]);
});

badges('style is shields.io style; a bad style, format or software names what is allowed', async () => {
  const flat = await readSvg('/api/badges/latest/papermc.svg');
  const large = await readSvg('/api/badges/latest/papermc.svg?style=for-the-badge');
  assert.is(large.height, 28);
  assert.ok(large.width > flat.width);
  const bad = await get('/api/badges/latest/papermc.svg?style=round');
  assert.is(bad.status, 400);
  assert.match(((await bad.json()) as { error: string }).error, /^style must be one of flat, flat-square/);
  const format = await get('/api/badges/latest/papermc.gif');
  assert.is(format.status, 404);
  assert.match(((await format.json()) as { error: string }).error, /one of svg, png, json/);
  assert.is((await get('/api/badges/latest/minestom.svg')).status, 404);
  assert.is((await get('/api/badges/latest/papermc/12.svg')).status, 404);
});

badges('total downloads: the count the origin keeps, as shields.io writes numbers', async () => {
  assert.equal((await readSvg('/api/badges/downloads.svg')).texts, ['downloads', '0']);
  const versions = (await (await get('/api/plugin-versions')).json()) as { versions: { id: string }[] };
  const jar = await get(`/api/plugin-versions/download/${versions.versions[0]!.id}`);
  await jar.arrayBuffer();
  await until(
    async () => ((await (await get('/api/badges/downloads.json')).json()) as { message: string }).message === '1',
    'the download counted on the badge',
    10_000,
  );
  assert.equal((await readSvg('/api/badges/downloads.svg')).texts, ['downloads', '1']);
});

badges('players online now for a public server; private servers have none', async () => {
  const { publicServer, privateServer } = ctx.accounts;
  assert.equal((await readSvg(`/api/badges/players/${publicServer.id}.svg`)).texts, ['players', 'no recent data']);
  const ingest = await get(`/api/servers/${publicServer.id}/stats`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${publicServer.ingestKey}` },
    body: JSON.stringify({ players: 12 }),
  });
  assert.is(ingest.status, 204);
  assert.equal((await readSvg(`/api/badges/players/${publicServer.id}.svg`)).texts, ['players', '12 online']);
  const json = (await (await get(`/api/badges/players/${publicServer.id}.json`)).json()) as { color: string };
  assert.is(json.color, 'brightgreen');
  assert.is((await get(`/api/badges/players/${privateServer.id}.svg`)).status, 403);
  assert.is((await get('/api/badges/players/00000000-0000-4000-8000-000000000000.svg')).status, 404);
  assert.is((await get('/api/badges/players/not-a-uuid.svg')).status, 400);
});

badges.run();
