import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stringify } from 'yaml';
import { checkDescriptors } from '../build/changes/descriptors.ts';
import { makePluginJar } from '../build/plugin-jar.ts';
import { RefusedError } from '../build/changes/refused.ts';
import { PluginVersionRecord } from '../server/versions/schema.ts';
import { SERVER_SOFTWARE, type ServerSoftware } from '../server/versions/software.ts';

// Issue 31: whatever text a JAR carries as plugin.yml, the release's descriptor check answers a
// refusal of one line or fields a record accepts; it never throws anything else.

const RECORD = {
  id: 'plugin-1-abc',
  pluginVersion: '1.0.0',
  javaVersion: '21',
  proxyVersion: null,
  fileName: 'A.jar',
  fileSize: 1,
  sha256: '0'.repeat(64),
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'operator',
};

/** The check's outcome for `text` as plugin.yml: `refused` with its line, or the fields, checked as a record's. */
function outcome(text: string, software: ServerSoftware[], override: boolean) {
  const jar = makePluginJar({ files: { 'plugin.yml': text } });
  try {
    const fields = checkDescriptors(jar, software, override);
    const parsed = PluginVersionRecord.safeParse({ ...RECORD, serverSoftware: software, ...fields });
    assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues));
    return { fields };
  } catch (error) {
    if (!(error instanceof RefusedError)) throw error;
    assert.not.match(error.message, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    assert.ok(error.message.length < 600, error.message);
    return { refused: error.message };
  }
}

const softwares = fc.subarray([...SERVER_SOFTWARE], { minLength: 1 });
/** YAML-shaped text: the characters YAML gives meaning to, names the check reads, and anything else. */
const yamlText = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'ab: -[]{}&*!|>\'"#%@`,?\n\t 0119.'.split(''), '\u0007', '\u202e') }),
  fc.string({ unit: 'binary' }),
  fc
    .array(
      fc.tuple(
        fc.constantFrom('name', 'main', 'api-version', 'folia-supported', 'depend', 'softdepend', 'depends', 'x'),
        fc.oneof(fc.string(), fc.boolean(), fc.double(), fc.array(fc.string()), fc.constant(null)),
      ),
    )
    .map((entries) => stringify(Object.fromEntries([['name', 'A'], ['main', 'a.B'], ...entries]))),
  fc.anything().map((value) => stringify(value)),
);

const property = suite('checkDescriptors: any plugin.yml text');

property('a refusal of one line or a valid record, never a crash', () => {
  fc.assert(
    fc.property(yamlText, softwares, fc.boolean(), (text, software, override) => {
      outcome(text, software, override);
    }),
    { numRuns: 400 },
  );
});

property('with --no-descriptor-check, never a refusal', () => {
  fc.assert(
    fc.property(yamlText, softwares, (text, software) => {
      assert.is(outcome(text, software, true).refused, undefined);
    }),
    { numRuns: 200 },
  );
});

property('YAML 1.1 as SnakeYAML reads it: yes is true, 1.20 is 1.2', () => {
  const { fields } = outcome('name: A\nmain: a.B\nfolia-supported: yes\napi-version: 1.20\n', ['Folia'], false);
  assert.equal(fields, { foliaSupported: true, apiVersion: '1.2' });
});

property.run();
