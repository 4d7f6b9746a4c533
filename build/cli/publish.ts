import { openAsBlob } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { jsonOrUndefined } from '../../server/data-files.ts';
import { escapeForbidden } from '../../server/free-text.ts';
import { PublishMetadata } from '../../server/publish/metadata.ts';
import { RefusedError } from '../changes/refused.ts';

// Issue 30 item 6: `depot publish` releases through a depot's HTTP API from any machine with the
// repository (a CI runner, a laptop): no data/, no configuration, no build lock; the depot checks
// and releases as `depot release` does, and answers once it serves the version.

const USAGE =
  'depot publish <file.jar> --url https://depot.example.org --token-env DEPOT_TOKEN --version 1.4.0 --java 21 --software PaperMC[,Folia] [--minecraft 1.20.6-1.21.4] [--proxy 3.4] [--channel beta] [--changelog notes.md]';

/** The metadata fields (issue 30 item 2) under the release's option names, for refusals that name what was typed. */
const OPTION_OF_FIELD: Record<string, string> = {
  pluginVersion: '--version',
  javaVersion: '--java',
  serverSoftware: '--software',
  minecraftVersions: '--minecraft',
  proxyVersion: '--proxy',
  channel: '--channel',
  changelog: '--changelog',
};

/** A 201's body: `{version}` (and whatever the depot adds beside it, printed as it came), `deploy` with AFTER_SWAP. */
const Published = z.looseObject({
  version: z.looseObject({ id: z.string() }),
  deploy: z.looseObject({ ok: z.boolean(), exitCode: z.number().nullable() }).optional(),
});

/** `depot publish`'s exit when the version is published and served, but the depot's AFTER_SWAP failed (1: not published). */
export const FAILED_DEPLOY_EXIT = 2;

/**
 * `publish <file.jar> --url U --token-env NAME --version X --java J --software S [...]`: the JAR
 * streamed to `POST <url>/api/plugin-versions` with the token the environment variable NAME holds;
 * the depot's answer (`{version}`) once it serves the version. Any error answer is a refusal
 * `<status> <error>`; the token is never printed.
 */
export async function publishJar(args: string[], env: NodeJS.ProcessEnv): Promise<object> {
  refuseTokenArgument(args);
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      'token-env': { type: 'string' },
      version: { type: 'string' },
      java: { type: 'string' },
      software: { type: 'string' },
      minecraft: { type: 'string' },
      proxy: { type: 'string' },
      channel: { type: 'string' },
      changelog: { type: 'string' },
    },
  });
  const [file, extra] = positionals;
  if (file === undefined) throw new RefusedError(`missing the JAR file: ${USAGE}`);
  if (extra !== undefined) throw new RefusedError(`one JAR file only: ${USAGE}`);
  const endpoint = publishEndpoint(values.url);
  const token = readToken(values['token-env'], env);
  const metadata = await publishMetadata(values);
  const jar = await openJar(file);
  const body = new FormData();
  body.set('file', jar, basename(file));
  body.set('metadata', JSON.stringify(metadata));
  return answered(endpoint, await send(endpoint, token, body), token);
}

/**
 * After the answer is printed: 0, or FAILED_DEPLOY_EXIT with one line saying what to do when the
 * depot published the version but its AFTER_SWAP failed, so that a CI step fails: publishing again
 * would be refused as a duplicate; it is the deploy that needs running again.
 */
export function sayFailedDeploy(answer: object): number {
  const { version, deploy } = answer as z.infer<typeof Published>;
  if (deploy?.ok !== false) return 0;
  const exit = deploy.exitCode === null ? 'killed or could not start' : `exit ${deploy.exitCode}`;
  console.error(
    `depot publish: published ${version.id}, but the depot's AFTER_SWAP failed (${exit}): the publishing origin serves it, the machines AFTER_SWAP copies to do not yet. Do not publish again (a duplicate is refused); have the depot's operator run AFTER_SWAP again (the origin's log and \`depot audit\` say why it failed).`,
  );
  return FAILED_DEPLOY_EXIT;
}

/**
 * A token on the command line lands in shell history, `ps` and CI logs: refused by name, and the
 * refusal never repeats it.
 */
function refuseTokenArgument(args: string[]): void {
  if (args.some((arg) => arg === '--token' || arg.startsWith('--token=')))
    throw new RefusedError(
      '--token: a token is never given as an argument (shell history, process lists and CI logs keep it); put it in an environment variable and name that: --token-env DEPOT_TOKEN',
    );
}

/** `--url`: the depot's http(s) address (a path prefix kept), and `/api/plugin-versions` under it. */
function publishEndpoint(text: string | undefined): string {
  const refuse = (problem: string) =>
    new RefusedError(`--url: ${problem}; give the depot's address, e.g. --url https://depot.example.org`);
  if (text === undefined) throw refuse('missing');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse(`${JSON.stringify(escapeForbidden(text))} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`must be http or https, not ${url.protocol}`);
  if (url.username || url.password) throw refuse('must not hold a user or password (the token goes in --token-env)');
  if (url.search || url.hash) throw refuse('must not hold a query string or fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}/api/plugin-versions`;
}

/** The token from the environment variable `--token-env` names: set, and one header-safe word. */
function readToken(name: string | undefined, env: NodeJS.ProcessEnv): string {
  if (name === undefined)
    throw new RefusedError(
      '--token-env: missing; name the environment variable that holds the publishing token, e.g. --token-env DEPOT_TOKEN',
    );
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    throw new RefusedError(
      `--token-env: ${JSON.stringify(escapeForbidden(name))} is not an environment variable's name (letters, digits and _), e.g. DEPOT_TOKEN`,
    );
  // A secret pasted into a CI setting often ends in a line break.
  const token = env[name]?.trim() ?? '';
  if (token === '')
    throw new RefusedError(
      `--token-env: the environment variable ${name} is not set or is empty; set it to a token from \`depot token add <username>\``,
    );
  // Checked here, not by fetch: its refusal of a header value would print the value.
  if (!/^[\x21-\x7e]+$/.test(token))
    throw new RefusedError(
      `--token-env: the environment variable ${name} does not hold a token (printable ASCII without spaces, such as dpp_...)`,
    );
  return token;
}

type MetadataValues = {
  version?: string | undefined;
  java?: string | undefined;
  software?: string | undefined;
  minecraft?: string | undefined;
  proxy?: string | undefined;
  channel?: string | undefined;
  changelog?: string | undefined;
};

/**
 * The `metadata` part from the release's options, checked with the depot's own schema before the
 * upload starts: a typo is refused at once, naming the option typed (`--java: Unknown Java version "16"; ...`).
 */
async function publishMetadata(values: MetadataValues): Promise<Record<string, unknown>> {
  const metadata: Record<string, unknown> = {
    pluginVersion: values.version,
    javaVersion: values.java,
    serverSoftware: values.software
      ?.split(',')
      .map((name) => name.trim())
      .filter(Boolean),
    minecraftVersions: values.minecraft,
    proxyVersion: values.proxy,
    channel: values.channel,
    changelog: values.changelog === undefined ? undefined : await readChangelogFile(values.changelog),
  };
  for (const [field, value] of Object.entries(metadata)) if (value === undefined) delete metadata[field];
  const parsed = PublishMetadata.safeParse(metadata);
  if (!parsed.success)
    throw new RefusedError(
      parsed.error.issues
        .map((issue) => `${OPTION_OF_FIELD[String(issue.path[0])] ?? 'metadata'}: ${issue.message}`)
        .join('; '),
    );
  return metadata;
}

/** `--changelog <file>`: its Markdown, sent as the metadata's `changelog` (the depot checks it as `release` does). */
async function readChangelogFile(file: string): Promise<string> {
  return readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new RefusedError(`--changelog: cannot read ${shown(file)}: ${error.code ?? error.message}`);
  });
}

/** The JAR as a Blob backed by its file: FormData streams it, never holding it whole in memory. */
async function openJar(file: string): Promise<Blob> {
  const refuse = (reason: string) => new RefusedError(`cannot read the JAR file ${shown(file)}: ${reason}`);
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    throw refuse(error.code ?? error.message);
  });
  if (!info.isFile()) throw refuse('not a file');
  return openAsBlob(file);
}

const shown = (path: string) => JSON.stringify(escapeForbidden(path));

/** The POST; a connection that fails (refused, reset, TLS) is a refusal naming the endpoint and the cause. */
async function send(endpoint: string, token: string, body: FormData): Promise<Response> {
  try {
    // A redirect is answered, not followed: a streamed body cannot be sent twice, and the token stays with the URL given.
    return await fetch(endpoint, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      redirect: 'manual',
    });
  } catch (error) {
    const cause = (error as { cause?: NodeJS.ErrnoException }).cause;
    throw new RefusedError(
      `cannot publish to ${endpoint}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
    );
  }
}

/**
 * A 2xx's `{version}`, or a refusal `<status> <error>` (SPEC 2.9's error body; the status text
 * otherwise). Whatever the server sent, the token is never in it as printed: a proxy that echoes
 * the request's Authorization would put it in the CI log.
 */
async function answered(endpoint: string, response: Response, token: string): Promise<object> {
  const withoutToken = (text: string) => text.replaceAll(token, '***');
  const body = jsonOrUndefined(withoutToken(await response.text()));
  if (response.ok) {
    const published = Published.safeParse(body);
    if (published.success) return published.data;
    throw new RefusedError(`${response.status} ${endpoint} answered without a {version}: is --url a depot?`);
  }
  const location = response.headers.get('location') && withoutToken(response.headers.get('location')!);
  const error = (body as { error?: unknown } | undefined)?.error;
  const message =
    response.status >= 300 && response.status < 400 && location
      ? `the depot moved to ${location}: give that as --url`
      : typeof error === 'string'
        ? error
        : withoutToken(response.statusText);
  // One line, whatever the server sent.
  throw new RefusedError(`${response.status} ${escapeForbidden(message)}`);
}
