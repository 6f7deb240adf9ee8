import { readFileSync } from 'node:fs';
import { unwrap } from '@switchyard/client';
import type { Command } from 'commander';
import type { Context } from '../context.ts';
import { UsageError } from '../failures.ts';
import { ago, table } from '../format.ts';
import { examples } from '../help.ts';
import {
  isLocalSetting,
  LOCAL_SETTINGS,
  type LocalSetting,
  readLocalConfig,
  validateLocalSetting,
  writeLocalConfig,
} from '../local-config.ts';

function localSetting(name: string): LocalSetting {
  if (!isLocalSetting(name)) {
    throw new UsageError(
      `"${name}" is not a setting of the CLI; the settings are ${Object.keys(LOCAL_SETTINGS).join(', ')}.`,
    );
  }
  return name;
}

/** Shows a secret by its length only: enough to see it is set, nothing to copy. */
function masked(name: LocalSetting, value: string | undefined): string {
  if (value === undefined) return '-';
  return name === 'api-key' || name === 'connector-token' ? `(set, ${value.length} characters)` : value;
}

/**
 * `config` has two halves. `set`, `unset` and `show` are the CLI's own settings in a file on this
 * machine; `list`, `get`, `put` and `reload` are the configurations the control plane stores.
 */
export function registerConfigCommands(program: Command, ctx: Context): void {
  const config = examples(
    program
      .command('config')
      .description(
        "The CLI's own settings on this machine (set, unset, show) and the configurations the control plane stores (list, get, put, reload).",
      ),
    'switchyard config set url http://127.0.0.1:8080',
    'switchyard config show',
    'switchyard config list',
  );

  examples(
    config
      .command('set')
      .description(
        `Store a setting of the CLI in its config file (${Object.keys(LOCAL_SETTINGS).join(', ')}).`,
      )
      .argument('<name>', 'the setting')
      .argument('<value>', 'its value'),
    'switchyard config set url http://127.0.0.1:8080',
    'switchyard config set api-key "$SERVICE_API_KEY"',
  ).action((name: string, value: string) => {
    const setting = localSetting(name);
    const file = ctx.configFile;
    const current = readLocalConfig(file);
    current[setting] = validateLocalSetting(setting, value);
    writeLocalConfig(file, current);
    if (ctx.json) return ctx.printJson({ file, name: setting, value: masked(setting, current[setting]) });
    ctx.print(`${setting} = ${masked(setting, current[setting])} (in ${file})`);
  });

  examples(
    config
      .command('unset')
      .description('Remove a setting from the config file.')
      .argument('<name>', 'the setting'),
    'switchyard config unset api-key',
  ).action((name: string) => {
    const setting = localSetting(name);
    const file = ctx.configFile;
    const current = readLocalConfig(file);
    const had = current[setting] !== undefined;
    delete current[setting];
    writeLocalConfig(file, current);
    if (ctx.json) return ctx.printJson({ file, name: setting, removed: had });
    ctx.print(had ? `${setting} removed (from ${file})` : `${setting} was not set (in ${file})`);
  });

  examples(
    config
      .command('show')
      .description(
        'Show the settings in effect and where each comes from: flag, environment, config file or default.',
      ),
    'switchyard config show',
    'SWITCHYARD_URL=http://10.0.0.5:8080 switchyard config show --json',
  ).action(() => {
    const settings = {
      url: ctx.urlSetting(),
      'api-key': ctx.apiKeySetting(),
      'connector-token': ctx.setting(
        undefined,
        ['SWITCHYARD_CONNECTOR_TOKEN', 'SERVICE_CONNECTOR_TOKEN'],
        'connector-token',
      ),
      'docs-url': ctx.setting(undefined, ['SWITCHYARD_DOCS_URL'], 'docs-url'),
    } as const;
    if (ctx.json) {
      return ctx.printJson({
        file: ctx.configFile,
        settings: Object.fromEntries(
          Object.entries(settings).map(([name, s]) => [
            name,
            { value: masked(name as LocalSetting, s.value), source: s.source },
          ]),
        ),
      });
    }
    ctx.print(
      table(
        ['SETTING', 'VALUE', 'FROM'],
        Object.entries(settings).map(([name, s]) => [name, masked(name as LocalSetting, s.value), s.source]),
      ),
    );
    ctx.print();
    ctx.print(`config file: ${ctx.configFile}`);
  });

  examples(
    config.command('list').description('List the configurations the control plane stores.'),
    'switchyard config list',
  ).action(async () => {
    const answer = await unwrap(ctx.client.GET('/api/v1/configs'));
    if (ctx.json) return ctx.printJson(answer);
    if (answer.configs.length === 0) return ctx.print('The control plane stores no configuration.');
    ctx.print(
      table(
        ['NAME', 'VERSION', 'BYTES', 'UPDATED', 'BY'],
        answer.configs.map((c) => [
          c.name,
          String(c.version),
          String(c.bytes),
          ago(c.updated_at),
          c.updated_by ?? '-',
        ]),
      ),
    );
  });

  examples(
    config
      .command('get')
      .description('Print a stored configuration: its text as stored (with --json, its record and text).')
      .argument('<name>', 'the configuration name'),
    'switchyard config get control-plane',
  ).action(async (name: string) => {
    const stored = await unwrap(
      ctx.client.GET('/api/v1/configs/{config_name}', {
        params: { path: { config_name: name } },
        headers: { Accept: 'application/json' },
      }),
    );
    if (ctx.json) return ctx.printJson(stored);
    const record = stored as { content: string };
    ctx.stdout.write(record.content.endsWith('\n') ? record.content : `${record.content}\n`);
  });

  examples(
    config
      .command('put')
      .description(
        'Store a new version of a configuration (YAML) from a file, or from standard input with -f -.',
      )
      .argument('<name>', 'the configuration name')
      .requiredOption('-f, --file <path>', 'the YAML file; - reads standard input')
      .option('--updated-by <who>', 'who made the change, recorded with the version'),
    'switchyard config put control-plane -f control-plane.yaml --updated-by alice',
    "printf 'node_health:\\n  check_interval: 15s\\n' | switchyard config put control-plane -f -",
  ).action(async (name: string, options: { file: string; updatedBy?: string }) => {
    let text: string;
    try {
      text = readFileSync(options.file === '-' ? 0 : options.file, 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read ${options.file}: ${(error as Error).message}`);
    }
    const answer = await unwrap(
      ctx.client.PUT('/api/v1/configs/{config_name}', {
        params: { path: { config_name: name } },
        body: text,
        bodySerializer: (body: string) => body,
        headers: {
          'Content-Type': 'text/yaml',
          ...(options.updatedBy ? { 'X-Updated-By': options.updatedBy } : {}),
        },
      }),
    );
    if (ctx.json) return ctx.printJson(answer);
    ctx.print(
      `${answer.name}: version ${answer.version} stored (${answer.bytes} bytes). Apply it with \`switchyard config reload\`.`,
    );
  });

  examples(
    config
      .command('reload')
      .description(
        'Make the control plane read its configuration again; prints what changed, what applied at once and what waits for a restart.',
      ),
    'switchyard config reload',
  ).action(async () => {
    const answer = await unwrap(ctx.client.POST('/api/v1/configs/reload'));
    if (ctx.json) return ctx.printJson(answer);
    const list = (keys: string[]) => (keys.length ? keys.join(', ') : 'none');
    ctx.print(`reloaded from ${answer.source}`);
    ctx.print(`changed: ${list(answer.changed)}`);
    ctx.print(`applied: ${list(answer.applied)}`);
    ctx.print(`restart required: ${list(answer.restart_required)}`);
  });
}
