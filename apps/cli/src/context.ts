import { createSwitchyardClient, type SwitchyardClient } from '@switchyard/client';
import { type Colours, coloursFor } from './colours.ts';
import { httpUrl, type LocalConfig, localConfigPath, readLocalConfig } from './local-config.ts';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** The options every command takes (they may come before or after the command's name). */
export interface GlobalOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
}

/** Where a setting's value came from, for `config show` and `doctor`. */
export type SettingSource = 'flag' | 'environment' | 'config file' | 'default' | 'unset';

export interface Setting {
  value: string | undefined;
  source: SettingSource;
}

export interface OutputStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

/**
 * What one run of the CLI works with: its environment, its output streams, the global options
 * and, from them, the control plane's address, key and client.
 */
export class Context {
  globals: GlobalOptions = {};
  readonly colours: Colours;
  readonly errColours: Colours;
  #localConfig: LocalConfig | undefined;
  #client: SwitchyardClient | undefined;

  constructor(
    readonly env: NodeJS.ProcessEnv,
    readonly stdout: OutputStream,
    readonly stderr: OutputStream,
  ) {
    this.colours = coloursFor(stdout, env);
    this.errColours = coloursFor(stderr, env);
  }

  get json(): boolean {
    return this.globals.json === true;
  }

  get configFile(): string {
    return localConfigPath(this.env);
  }

  get localConfig(): LocalConfig {
    this.#localConfig ??= readLocalConfig(this.configFile);
    return this.#localConfig;
  }

  /** A setting from its flag, else its environment variables (first set wins), else the config file. */
  setting(flag: string | undefined, envNames: string[], fileKey: keyof LocalConfig): Setting {
    if (flag !== undefined && flag !== '') return { value: flag, source: 'flag' };
    for (const name of envNames) {
      const value = this.env[name];
      if (value !== undefined && value !== '') return { value, source: 'environment' };
    }
    const stored = this.localConfig[fileKey];
    if (stored !== undefined) return { value: stored, source: 'config file' };
    return { value: undefined, source: 'unset' };
  }

  /** The control plane's address: --url, SWITCHYARD_URL, the config file, else http://127.0.0.1:8080. */
  urlSetting(): Setting {
    const found = this.setting(this.globals.url, ['SWITCHYARD_URL'], 'url');
    return found.value === undefined ? { value: DEFAULT_URL, source: 'default' } : found;
  }

  get baseUrl(): string {
    return httpUrl(this.urlSetting().value!, 'The control-plane URL');
  }

  /** The API key: --api-key, SERVICE_API_KEY, else the config file. */
  apiKeySetting(): Setting {
    return this.setting(this.globals.apiKey, ['SERVICE_API_KEY'], 'api-key');
  }

  get apiKey(): string | undefined {
    return this.apiKeySetting().value;
  }

  get client(): SwitchyardClient {
    this.#client ??= createSwitchyardClient({
      baseUrl: this.baseUrl,
      ...(this.apiKey ? { apiKey: this.apiKey } : {}),
    });
    return this.#client;
  }

  /** A line (or block) for people on stdout. */
  print(text = ''): void {
    this.stdout.write(`${text}\n`);
  }

  /** The one JSON document of a --json run. */
  printJson(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** One JSON line of a stream (--json on `tail`, `memory watch`). */
  printJsonLine(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** A note for people on stderr (progress, hints): never mixed into what a script reads. */
  note(text: string): void {
    this.stderr.write(`${text}\n`);
  }
}
