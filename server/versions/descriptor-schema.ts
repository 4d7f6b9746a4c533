import { z } from 'zod';
import { DeclaredApiVersion, DeclaredNames, DeclaredPluginName } from './schema.ts';

// Issue 31: the four plugin descriptors as the platforms read them, checked as untrusted input. Only
// the keys depot stores or decides on are typed; the rest (commands, permissions, ...) pass unread.

/** What a descriptor declares, whatever its format: the record's optional fields. */
export type Declared = {
  foliaSupported?: boolean;
  apiVersion?: string;
  depend?: string[];
  softdepend?: string[];
};

/** YAML 1.1 reads `api-version: 1.20` as the number 1.2, as SnakeYAML (and so Bukkit) does: kept as Bukkit sees it. */
const ApiVersion = z.union([z.string(), z.number()]).transform(String).pipe(DeclaredApiVersion);

/** An empty key (`depend:`) is YAML's null, which Bukkit and BungeeCord take as absent. */
const Names = DeclaredNames.nullish();
const MainClass = z.string().min(1).max(256);

/** Bukkit's PluginDescriptionFile (name and main required), with BungeeCord's spellings of the dependencies. */
export const PluginYml = z.looseObject({
  name: DeclaredPluginName,
  main: MainClass,
  'api-version': ApiVersion.nullish(),
  'folia-supported': z.boolean().nullish(),
  depend: Names,
  softdepend: Names,
  depends: Names,
  softDepends: Names,
});

/** BungeeCord's PluginDescription: what it reads from bungee.yml (or plugin.yml). */
export const BUNGEE_KEYS = ['name', 'main', 'version', 'author', 'depends', 'softDepends', 'description', 'libraries'];

export const BungeeYml = z.looseObject({
  name: DeclaredPluginName,
  main: MainClass,
  depends: Names,
  softDepends: Names,
});

/** Paper 1.20.5+: `dependencies: {server: {Name: {required}}, bootstrap: ...}`, `required` true when absent. */
const PaperDependencyMap = z
  .record(DeclaredPluginName, z.looseObject({ required: z.boolean().nullish() }).nullish())
  .refine((map) => Object.keys(map).length <= 100, { error: 'must name at most 100 plugins' });

/** Paper 1.19.4 to 1.20.4: `dependencies: [{name, required}]`. */
const PaperDependencyList = z
  .array(z.looseObject({ name: DeclaredPluginName, required: z.boolean().nullish() }))
  .max(100, { error: 'must name at most 100 plugins' });

const PaperDependencyBlocks = z.looseObject({ server: PaperDependencyMap.nullish() });

/** Either form, told apart by its shape, so that a refusal names the key at fault (a union names none). */
const PaperDependencies = z
  .unknown()
  .transform((value, ctx): z.output<typeof PaperDependencyBlocks> | z.output<typeof PaperDependencyList> => {
    const parsed = (Array.isArray(value) ? PaperDependencyList : PaperDependencyBlocks).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  });

export const PaperPluginYml = z.looseObject({
  name: DeclaredPluginName,
  main: MainClass,
  'api-version': ApiVersion.nullish(),
  'folia-supported': z.boolean().nullish(),
  dependencies: PaperDependencies.nullish(),
});

export const VelocityPluginJson = z.looseObject({
  id: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, { error: 'must be a Velocity plugin id such as "depotdemo"' }),
  main: MainClass,
  dependencies: z
    .array(z.looseObject({ id: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/), optional: z.boolean().nullish() }))
    .max(100)
    .nullish(),
});

/** Only what is there: no empty lists, no nulls. */
function declared(fields: Declared): Declared {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => (Array.isArray(value) ? value.length > 0 : value !== undefined)),
  );
}

export function declaredByPluginYml(yml: z.output<typeof PluginYml>): Declared {
  return declared({
    foliaSupported: yml['folia-supported'] ?? undefined,
    apiVersion: yml['api-version'] ?? undefined,
    depend: yml.depend ?? undefined,
    softdepend: yml.softdepend ?? undefined,
  });
}

/** What BungeeCord reads of a bungee.yml, or of a plugin.yml it loads. */
export function declaredByBungeeYml(yml: z.output<typeof BungeeYml>): Declared {
  return declared({ depend: yml.depends ?? undefined, softdepend: yml.softDepends ?? undefined });
}

export function declaredByPaperPluginYml(yml: z.output<typeof PaperPluginYml>): Declared {
  const { dependencies } = yml;
  const list = Array.isArray(dependencies)
    ? dependencies.map(({ name, required }) => ({ name, required: required ?? true }))
    : Object.entries(dependencies?.server ?? {}).map(([name, dependency]) => ({
        name,
        required: dependency?.required ?? true,
      }));
  return declared({
    foliaSupported: yml['folia-supported'] ?? undefined,
    apiVersion: yml['api-version'] ?? undefined,
    depend: list.filter((d) => d.required).map((d) => d.name),
    softdepend: list.filter((d) => !d.required).map((d) => d.name),
  });
}

export function declaredByVelocityJson(json: z.output<typeof VelocityPluginJson>): Declared {
  const dependencies = json.dependencies ?? [];
  return declared({
    depend: dependencies.filter((d) => d.optional !== true).map((d) => d.id),
    softdepend: dependencies.filter((d) => d.optional === true).map((d) => d.id),
  });
}
