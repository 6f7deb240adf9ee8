/**
 * Reproduces a container image from its Dockerfile without a container engine (none runs on
 * these machines), so the Dockerfiles the deployment pages publish cannot rot unnoticed: the file
 * is parsed with dockerfile-ast and each instruction is carried out the way docker would, on the
 * host, in scratch directories.
 *
 * What is emulated:
 * - Each stage gets a scratch directory of its own standing for its root filesystem; container
 *   paths (WORKDIR, COPY destinations, `COPY --from` sources, path-valued ENV) map into it.
 * - ARG (build args passed by the caller, else the declared default), ENV, and `$VAR`, `${VAR}`,
 *   `${VAR:-word}`, `${VAR:+word}` in the instructions that expand them.
 * - COPY from the build context honours `.dockerignore` (@balena/dockerignore, docker's matching
 *   rules); `COPY --from=<stage>` copies between stage roots. A directory source copies its
 *   contents, a destination ending in `/` (or several sources) is a directory, as in docker.
 * - RUN (shell form) runs through `sh -c` in the mapped WORKDIR with the stage's ENV and ARG
 *   values, HOME at the stage's /root, and the host's PATH (node and npm are the host's).
 *   `--mount=type=cache,target=<dir>` links that directory to a persistent host directory for the
 *   step only, as BuildKit keeps a cache mount across builds and out of the image; the npm cache
 *   (/root/.npm) maps to the host's, so installs are as warm as a rebuild on a build machine.
 * - Every stage is built at the same host path (the one before is moved aside when the next
 *   begins), as each stage's /app is the same container path: absolute paths a build writes into
 *   its output lead into the final stage, as in the image. Only the final stage is kept once every
 *   step ran, so the running process finds no file of an earlier stage it did not copy.
 * - The final stage's ENV and exec-form CMD are how `start()` runs it; its VOLUMEs are fresh
 *   directories in the root (docker's anonymous volumes); HEALTHCHECK's exec-form command runs
 *   against the running process; STOPSIGNAL is what `stop()` sends.
 *
 * What cannot be emulated is checked statically instead, and refused when it is wrong:
 * - FROM pulls nothing: the base image's files (node, npm, the `node` user) are the host's. The
 *   base is only recorded (`stages[i].from`) for the tests to check its pin.
 * - USER switches nothing (the steps run as the host user); the final stage's USER is recorded,
 *   and `--chown` of COPY is recorded, for the tests to check. What the running process wrote
 *   where that USER could not is listed by `writtenWithoutPermission()`.
 * - A RUN line may use only relative paths: a word starting with `/` would reach the host's
 *   filesystem, not the stage's, so it is refused.
 * Any instruction, flag or form not listed above fails loudly rather than being skipped.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, posix, relative, resolve } from 'node:path';
import ignore from '@balena/dockerignore';
import {
  type Cmd,
  type Copy,
  DockerfileParser,
  type Env,
  type Instruction,
  type JSONInstruction,
  type Run,
} from 'dockerfile-ast';
import { type ExitStatus, type RunningProcess, startNode } from '../support/child-process.ts';

export interface ReproduceOptions {
  /** The build context (the repository root for both apps). */
  context: string;
  /** The Dockerfile, relative to the context or absolute. */
  dockerfile: string;
  /** Where the stage roots are made; the caller removes it. */
  scratch: string;
  /** `--build-arg NAME=value`. */
  buildArgs?: Record<string, string>;
  /** Host directories standing for cache mounts, by target; default: /root/.npm is the host's npm cache. */
  cacheMounts?: Record<string, string>;
  /** Extra variables for RUN steps only (not part of the image), e.g. npm settings of the host. */
  runEnv?: Record<string, string>;
}

export interface StageRecord {
  name: string;
  /** The base image as written after FROM, e.g. node:20-bookworm-slim. */
  from: string;
  /** The host directory standing for the stage's root filesystem. */
  root: string;
  /** WORKDIR as a container path. */
  workdir: string;
  env: Record<string, string>;
  user: string | undefined;
  /** `--chown` values of its COPY instructions, with their destinations (not applied; see header). */
  chowns: Array<{ destination: string; owner: string }>;
}

export interface StepTiming {
  stage: string;
  /** The instruction as written (continuations joined). */
  instruction: string;
  ms: number;
}

export interface Healthcheck {
  command: string[];
  intervalMs: number;
  timeoutMs: number;
  startPeriodMs: number;
  retries: number;
}

export interface ReproducedImage {
  stages: StageRecord[];
  /** The stage the image is (the last one). */
  final: StageRecord;
  cmd: string[];
  healthcheck: Healthcheck | undefined;
  stopSignal: NodeJS.Signals;
  volumes: string[];
  exposed: string[];
  /** How long each RUN took. */
  timings: StepTiming[];
  /** The host path of a container path of the final stage. */
  hostPath(containerPath: string): string;
  /** Runs the image like `docker run -e ...`: its ENV with `env` over it, its CMD in its WORKDIR. */
  start(env?: Record<string, string>): ReproducedContainer;
}

export interface ReproducedContainer {
  process: RunningProcess;
  /** The environment the process got (container paths already mapped to host paths). */
  env: Record<string, string>;
  /** Runs the HEALTHCHECK command once, as docker does each interval. */
  checkHealth(): Promise<{ exitCode: number; output: string }>;
  /**
   * Runs the HEALTHCHECK command until it passes; rejects with its last output once the start
   * period and the retries docker would allow have passed, or when the process exits.
   */
  untilHealthy(): Promise<void>;
  /** Sends STOPSIGNAL (docker stop) and resolves with how the process ended. */
  stop(): Promise<ExitStatus>;
  /**
   * Container paths the process created or changed since it started where the image's USER could
   * not write: anywhere but a COPY --chown destination owned by that user (the HOME directory
   * aside). The steps run as the host user, often root, who may write anywhere; this is how a
   * server that writes beside its code (and fails with EACCES in the image) is caught.
   */
  writtenWithoutPermission(): string[];
}

const KNOWN_RUN_MOUNT_TYPES = new Set(['cache']);

/** Reads a Dockerfile and carries out every step of every stage; see the header for the rules. */
export async function reproduceImage(options: ReproduceOptions): Promise<ReproducedImage> {
  const context = resolve(options.context);
  const dockerfilePath = resolve(context, options.dockerfile);
  const text = readFileSync(dockerfilePath, 'utf8');
  const dockerfile = DockerfileParser.parse(text);
  const lines = text.split('\n');
  const buildArgs = options.buildArgs ?? {};
  const cacheMounts = options.cacheMounts ?? {
    '/root/.npm': process.env.npm_config_cache ?? join(homedir(), '.npm'),
  };
  const rules = dockerignoreOf(context);

  const where = (instruction: Instruction) =>
    `${relative(context, dockerfilePath)}:${instruction.getRange().start.line + 1}`;
  const fail = (instruction: Instruction, message: string): never => {
    throw new Error(`${where(instruction)} ${instruction.getKeyword()}: ${message}`);
  };

  /** The instruction's text after its keyword, continuations joined, as docker reads it. */
  const argumentText = (instruction: Instruction, from = 0): string => {
    const args = instruction.getArguments();
    if (args.length <= from) return '';
    const start = args[from]!.getRange().start;
    const end = args[args.length - 1]!.getRange().end;
    const chunk = lines.slice(start.line, end.line + 1);
    chunk[chunk.length - 1] = chunk[chunk.length - 1]!.slice(0, end.character);
    chunk[0] = chunk[0]!.slice(start.character);
    return chunk.join('\n').replace(/\\\r?\n/g, '');
  };

  const globalArgs: Record<string, string> = {};
  const stages: StageRecord[] = [];
  const timings: StepTiming[] = [];
  let stage: StageRecord | undefined;
  /** ARG values in scope in the current stage. */
  let args: Record<string, string> = {};
  let cmd: string[] | undefined;
  let healthcheck: Healthcheck | undefined;
  let stopSignal: NodeJS.Signals = 'SIGTERM';
  let volumes: string[] = [];
  let exposed: string[] = [];

  const mapPath = (record: StageRecord, containerPath: string): string => {
    const absolute = posix.resolve(record.workdir, containerPath);
    return join(record.root, absolute);
  };

  for (const instruction of dockerfile.getInstructions()) {
    const keyword = instruction.getKeyword();
    const flags = 'getFlags' in instruction ? (instruction as Run).getFlags() : [];
    const allowFlags = (...names: string[]) => {
      for (const flag of flags) {
        if (!names.includes(flag.getName())) fail(instruction, `flag --${flag.getName()} is not emulated`);
      }
    };
    const vars = () => ({ ...(stage ? {} : globalArgs), ...args, ...(stage?.env ?? {}) });

    if (keyword === 'ARG') {
      allowFlags();
      for (const property of (instruction as any).getProperties() as any[]) {
        const name = property.getName() as string;
        const declared = property.getValue() as string | null;
        const value =
          buildArgs[name] ??
          (stage ? globalArgs[name] : undefined) ??
          (declared === null ? undefined : expand(declared, vars(), instruction, fail));
        if (stage) {
          if (value !== undefined) args[name] = value;
        } else if (value !== undefined) globalArgs[name] = value;
      }
      continue;
    }
    if (keyword === 'FROM') {
      allowFlags();
      const words = instruction.getArguments().map((a) => a.getValue());
      if (!(words.length === 1 || (words.length === 3 && words[1]!.toUpperCase() === 'AS'))) {
        fail(instruction, `expected "FROM <image> [AS <name>]", got "${words.join(' ')}"`);
      }
      const from = expand(words[0]!, globalArgs, instruction, fail);
      if (stages.some((s) => s.name === from))
        fail(instruction, `a stage built on stage "${from}" is not emulated`);
      const name = words[2] ?? String(stages.length);
      // Every stage is built at one host path, as every stage's /app is one container path: the
      // builds write absolute paths of where they were made (astro's server build names
      // <root>/app/node_modules/... and <root>/app/apps/docs/src/...), which in the image lead into
      // the final stage. The stage before is moved aside (COPY --from reads it there).
      const root = join(options.scratch, 'rootfs');
      const previous = stages.at(-1);
      if (previous) {
        previous.root = join(options.scratch, `${stages.length - 1}-${previous.name}`);
        rmSync(previous.root, { recursive: true, force: true });
        renameSync(root, previous.root);
      }
      rmSync(root, { recursive: true, force: true });
      mkdirSync(join(root, 'root'), { recursive: true });
      stage = { name, from, root, workdir: '/', env: {}, user: undefined, chowns: [] };
      stages.push(stage);
      args = {};
      cmd = undefined;
      healthcheck = undefined;
      stopSignal = 'SIGTERM';
      volumes = [];
      exposed = [];
      continue;
    }
    if (!stage) fail(instruction, 'comes before the first FROM');
    const current = stage!;

    switch (keyword) {
      case 'ENV': {
        allowFlags();
        for (const property of (instruction as any).getProperties() as any[]) {
          const raw = property.getValue() as string | null;
          if (raw === null) fail(instruction, `${property.getName()} has no value`);
          current.env[property.getName()] = expand(raw!, vars(), instruction, fail);
        }
        break;
      }
      case 'WORKDIR': {
        allowFlags();
        const dir = expand(argumentText(instruction), vars(), instruction, fail);
        current.workdir = posix.resolve(current.workdir, dir);
        mkdirSync(mapPath(current, current.workdir), { recursive: true });
        break;
      }
      case 'COPY': {
        allowFlags('from', 'chown');
        if ((instruction as Copy).getJSONStrings().length > 0)
          fail(instruction, 'the JSON form is not emulated');
        const words = instruction.getArguments().map((a) => expand(a.getValue(), vars(), instruction, fail));
        if (words.length < 2) fail(instruction, 'needs a source and a destination');
        const destination = words.pop()!;
        const fromStage = flags.find((f) => f.getName() === 'from')?.getValue();
        const chown = flags.find((f) => f.getName() === 'chown')?.getValue();
        if (chown)
          current.chowns.push({ destination: posix.resolve(current.workdir, destination), owner: chown });
        let source: StageRecord | undefined;
        if (fromStage) {
          source = stages.find((s) => s.name === fromStage && s !== current);
          if (!source)
            fail(instruction, `--from=${fromStage} names no earlier stage (images are not pulled)`);
        }
        const intoDirectory = destination.endsWith('/') || words.length > 1;
        const target = mapPath(current, destination);
        for (const word of words) {
          if (/[*?[]/.test(word)) fail(instruction, `wildcards ("${word}") are not emulated`);
          let from: string;
          let isDirectory: boolean;
          if (source) {
            from = join(source.root, posix.resolve('/', word));
            if (!existsSync(from)) fail(instruction, `${word} does not exist in stage ${source.name}`);
            isDirectory = lstatSync(from).isDirectory();
          } else {
            const inContext = posix.normalize(word).replace(/^\.\/?|\/$/g, '');
            if (inContext.startsWith('..') || isAbsolute(inContext)) {
              fail(instruction, `${word} is outside the build context`);
            }
            from = join(context, inContext);
            if (!existsSync(from) || (inContext !== '' && rules.ignored.ignores(inContext))) {
              fail(
                instruction,
                `${word} is not in the build context (missing, or excluded by .dockerignore)`,
              );
            }
            isDirectory = lstatSync(from).isDirectory();
          }
          const to = isDirectory ? target : intoDirectory ? join(target, basename(from)) : target;
          mkdirSync(isDirectory ? to : dirname(to), { recursive: true });
          if (source) {
            cpSync(from, to, { recursive: true, verbatimSymlinks: true });
          } else if (isDirectory) {
            copyContext(context, relative(context, from), to, rules);
          } else {
            cpSync(from, to);
          }
        }
        break;
      }
      case 'RUN': {
        allowFlags('mount');
        const run = instruction as Run;
        if (run.getJSONStrings().length > 0) fail(instruction, 'the exec (JSON) form is not emulated');
        const script = argumentText(instruction);
        // A path starts a word or follows `=`, a redirection or a quote (`--prefix=/usr`, `>/tmp/x`);
        // `//` is left alone, as in a URL.
        const absolute = /(?:^|[\s=<>'"(;|&])(\/(?!\/)[^\s'";|&)]*)/.exec(script)?.[1];
        if (absolute) {
          fail(instruction, `"${absolute}" is an absolute path, which would reach the host, not the stage`);
        }
        const mounts: string[] = [];
        for (const flag of flags) {
          const type = flag.getOption('type')?.getValue();
          const target = flag.getOption('target')?.getValue();
          if (!type || !KNOWN_RUN_MOUNT_TYPES.has(type) || !target) {
            fail(instruction, `--mount=${flag.getValue()} is not emulated (only type=cache with a target)`);
          }
          const hostDir = cacheMounts[target!];
          if (!hostDir) fail(instruction, `no host directory stands for the cache mount ${target}`);
          const at = mapPath(current, target!);
          mkdirSync(dirname(at), { recursive: true });
          mkdirSync(hostDir!, { recursive: true });
          rmSync(at, { recursive: true, force: true });
          symlinkSync(hostDir!, at);
          mounts.push(at);
        }
        const env = {
          ...mapEnv(current, { ...args, ...current.env }),
          PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
          HOME: join(current.root, 'root'),
          ...options.runEnv,
        };
        const started = performance.now();
        try {
          await runShell(script, mapPath(current, current.workdir), env, where(instruction));
        } finally {
          // A cache mount is not part of the image.
          for (const at of mounts) rmSync(at, { force: true });
        }
        timings.push({
          stage: current.name,
          instruction: `RUN ${script.replace(/\s+/g, ' ').trim()}`,
          ms: performance.now() - started,
        });
        break;
      }
      case 'USER':
        allowFlags();
        current.user = expand(argumentText(instruction), vars(), instruction, fail);
        break;
      case 'VOLUME': {
        allowFlags();
        const json = (instruction as any).getJSONStrings?.() as Array<{ getJSONValue(): string }> | undefined;
        const paths = json?.length
          ? json.map((s) => s.getJSONValue())
          : instruction.getArguments().map((a) => a.getValue());
        for (const path of paths) volumes.push(expand(path, vars(), instruction, fail));
        break;
      }
      case 'EXPOSE':
        allowFlags();
        exposed.push(
          ...instruction.getArguments().map((a) => expand(a.getValue(), vars(), instruction, fail)),
        );
        break;
      case 'STOPSIGNAL': {
        allowFlags();
        const signal = argumentText(instruction);
        if (!/^SIG[A-Z0-9]+$/.test(signal)) fail(instruction, `"${signal}" is not a signal name`);
        stopSignal = signal as NodeJS.Signals;
        break;
      }
      case 'CMD': {
        allowFlags();
        cmd = execForm(argumentText(instruction), instruction, fail);
        break;
      }
      case 'HEALTHCHECK': {
        allowFlags('interval', 'timeout', 'start-period', 'retries');
        const words = instruction.getArguments();
        if (words[0]?.getValue().toUpperCase() !== 'CMD')
          fail(instruction, 'only HEALTHCHECK CMD [...] is emulated');
        const flag = (name: string) => flags.find((f) => f.getName() === name)?.getValue() ?? undefined;
        healthcheck = {
          command: execForm(argumentText(instruction, 1), instruction, fail),
          intervalMs: duration(flag('interval') ?? '30s', instruction, fail),
          timeoutMs: duration(flag('timeout') ?? '30s', instruction, fail),
          startPeriodMs: duration(flag('start-period') ?? '0s', instruction, fail),
          retries: Number(flag('retries') ?? 3),
        };
        break;
      }
      default:
        fail(instruction, 'this instruction is not emulated');
    }
  }

  const final = stages.at(-1);
  if (!final) throw new Error(`${dockerfilePath} has no FROM`);
  if (!cmd) throw new Error(`${dockerfilePath}: the final stage has no CMD`);
  for (const volume of volumes) mkdirSync(mapPath(final, volume), { recursive: true });
  // The image is the final stage alone: nothing the process does may find an earlier stage's files
  // (a development install among them), so a runtime stage missing a package cannot pass here.
  for (const earlier of stages) if (earlier !== final) rmSync(earlier.root, { recursive: true, force: true });

  return imageOf({ stages, cmd, healthcheck, stopSignal, volumes, exposed, timings });
}

/** What a reproduced image is made of, all of it plain data (image-cache.ts keeps it as JSON). */
export type ImageRecord = Pick<
  ReproducedImage,
  'stages' | 'cmd' | 'healthcheck' | 'stopSignal' | 'volumes' | 'exposed' | 'timings'
>;

/** The image whose final stage (the last of `record.stages`) is built at its recorded root. */
export function imageOf(record: ImageRecord): ReproducedImage {
  const { stages, cmd: finalCmd, healthcheck: finalHealthcheck, stopSignal: finalSignal } = record;
  const final = stages.at(-1)!;
  const mapPath = (containerPath: string) => join(final.root, posix.resolve(final.workdir, containerPath));
  return {
    ...record,
    final,
    hostPath: mapPath,
    start(overrides = {}) {
      const env = mapEnv(final, { ...final.env, ...overrides });
      const processEnv = { PATH: process.env.PATH, HOME: join(final.root, 'root'), ...env };
      const cwd = mapPath(final.workdir);
      const [program, ...argv] = finalCmd;
      if (program !== 'node')
        throw new Error(`CMD runs "${program}"; only node (the base image's) is emulated`);
      const startedAt = Date.now();
      const child = startNode(argv, { cwd, env: processEnv });
      const checkHealth = async () => {
        if (!finalHealthcheck) throw new Error('the image has no HEALTHCHECK');
        const [hcProgram, ...hcArgs] = finalHealthcheck.command;
        if (hcProgram !== 'node') {
          throw new Error(`HEALTHCHECK runs "${hcProgram}"; only node (the base image's) is emulated`);
        }
        return runHealthcheck(hcArgs, cwd, processEnv, finalHealthcheck.timeoutMs);
      };
      return {
        process: child,
        env,
        checkHealth,
        async untilHealthy() {
          if (!finalHealthcheck) throw new Error('the image has no HEALTHCHECK');
          // Docker's own budget: failures in the start period do not count, then `retries` intervals.
          const deadline =
            Date.now() +
            finalHealthcheck.startPeriodMs +
            finalHealthcheck.retries * finalHealthcheck.intervalMs;
          let last = { exitCode: -1, output: 'not run' };
          for (;;) {
            if (child.child.exitCode !== null || child.child.signalCode !== null) {
              throw new Error(`the process exited before it was healthy; its output:\n${child.output()}`);
            }
            last = await checkHealth();
            if (last.exitCode === 0) return;
            if (Date.now() > deadline) {
              throw new Error(
                `HEALTHCHECK kept failing (exit ${last.exitCode}: ${last.output}); the process's output:\n${child.output()}`,
              );
            }
            // Docker's --start-interval idea: probe often while starting, rather than every interval.
            await new Promise((done) => setTimeout(done, 250));
          }
        },
        stop: () => child.stop(finalSignal),
        writtenWithoutPermission() {
          const user = final.user;
          if (user === undefined || user === 'root' || user === '0') return [];
          const owned = final.chowns
            .filter((c) => c.owner === user || c.owner.startsWith(`${user}:`))
            .map((c) => c.destination);
          // /root stands for the user's HOME here (the node user's is /home/node, which it owns).
          return changedSince(final.root, startedAt, [...owned, '/root']);
        },
      };
    },
  };
}

/** Container paths under `root` whose modification time is `since` or later, `skip` subtrees aside. */
function changedSince(root: string, since: number, skip: string[]): string[] {
  const found: string[] = [];
  const walk = (hostDir: string, containerDir: string) => {
    for (const entry of readdirSync(hostDir, { withFileTypes: true })) {
      const containerPath = posix.join(containerDir, entry.name);
      if (skip.some((s) => containerPath === s || containerPath.startsWith(`${s}/`))) continue;
      const hostPath = join(hostDir, entry.name);
      if (lstatSync(hostPath).mtimeMs >= since) found.push(containerPath);
      if (entry.isDirectory()) walk(hostPath, containerPath);
    }
  };
  walk(root, '/');
  return found.sort();
}

/** Values that are absolute container paths inside the stage's root become host paths. */
function mapEnv(record: StageRecord, env: Record<string, string>): Record<string, string> {
  const mapped: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const first = value.startsWith('/') ? value.split('/')[1] : undefined;
    mapped[name] = first && existsSync(join(record.root, first)) ? join(record.root, value) : value;
  }
  return mapped;
}

/**
 * Docker's variable substitution in the forms the Dockerfiles use: `$NAME`, `${NAME}`,
 * `${NAME:-word}`, `${NAME:+word}`, and `\$` for a literal dollar. Other forms are refused.
 */
function expand(
  text: string,
  vars: Record<string, string>,
  instruction: Instruction,
  fail: (instruction: Instruction, message: string) => never,
): string {
  return text.replace(
    /\\\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$\{[^}]*\}/g,
    (match, braced: string | undefined, operator: string | undefined, word: string | undefined, bare) => {
      if (match === '\\$') return '$';
      const name = braced ?? bare;
      if (!name) return fail(instruction, `the substitution ${match} is not emulated`);
      const value = vars[name];
      if (operator === ':-') return value ? value : (word ?? '');
      if (operator === ':+') return value ? (word ?? '') : '';
      return value ?? '';
    },
  );
}

/** The exec (JSON array) form of CMD and HEALTHCHECK CMD; the shell form is refused. */
function execForm(
  text: string,
  instruction: Instruction,
  fail: (instruction: Instruction, message: string) => never,
): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((word) => typeof word === 'string')) {
    return fail(instruction, `expected the exec form ["program", "arg", ...], got ${text}`);
  }
  return parsed as string[];
}

/** Docker durations as HEALTHCHECK takes them: 30s, 1m30s, 500ms, 1h. */
function duration(
  text: string,
  instruction: Instruction,
  fail: (instruction: Instruction, message: string) => never,
): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) {
    return fail(instruction, `"${text}" is not a duration`);
  }
  return parts.reduce((sum, part) => sum + Number(part[1]) * units[part[2]!]!, 0);
}

/** The build context's .dockerignore rules, and its exceptions (`!pattern`). */
function dockerignoreOf(context: string) {
  const ignorePath = join(context, '.dockerignore');
  const lines = existsSync(ignorePath) ? readFileSync(ignorePath, 'utf8').split('\n') : [];
  const exceptions = lines.map((line) => line.trim()).filter((line) => line.startsWith('!'));
  return { ignored: ignore().add(lines), exceptions };
}

type Dockerignore = ReturnType<typeof dockerignoreOf>;

/**
 * Visits a directory of the build context (`relativeDir`, '' for all of it), leaving out what
 * .dockerignore excludes: each directory before its contents, then each file. An excluded
 * directory is entered only when an exception (`!pattern`) could match inside it, so node_modules
 * trees are never walked.
 */
function walkContext(
  context: string,
  relativeDir: string,
  rules: Dockerignore,
  visit: (path: string, isDirectory: boolean) => void,
): void {
  const { ignored, exceptions } = rules;
  visit(relativeDir, true);
  for (const entry of readdirSync(join(context, relativeDir), { withFileTypes: true })) {
    const path = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      const excluded = ignored.ignores(path);
      const mayHoldException = exceptions.some((e) => e.slice(1).startsWith(`${path}/`) || /^![*?[]/.test(e));
      if (excluded && !mayHoldException) continue;
      walkContext(context, path, rules, visit);
    } else if (!ignored.ignores(path)) {
      visit(path, false);
    }
  }
}

/** Every file of the build context that .dockerignore lets in, as paths relative to it, sorted. */
export function contextFiles(context: string): string[] {
  const files: string[] = [];
  walkContext(context, '', dockerignoreOf(context), (path, isDirectory) => {
    if (!isDirectory) files.push(path);
  });
  return files.sort();
}

/** Copies a directory of the build context, leaving out what .dockerignore excludes. */
function copyContext(context: string, relativeDir: string, to: string, rules: Dockerignore): void {
  walkContext(context, relativeDir, rules, (path, isDirectory) => {
    const target = join(to, relative(relativeDir, path));
    if (isDirectory) mkdirSync(target, { recursive: true });
    else cpSync(join(context, path), target, { verbatimSymlinks: true });
  });
}

/** Runs one RUN step; rejects with its output when it fails. */
function runShell(script: string, cwd: string, env: Record<string, string>, where: string): Promise<void> {
  return new Promise((done, reject) => {
    execFile('sh', ['-c', script], { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error)
        reject(new Error(`${where} RUN failed (${error.message.split('\n')[0]}):\n${stdout}${stderr}`));
      else done();
    });
  });
}

function runHealthcheck(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ exitCode: number; output: string }> {
  return new Promise((done) => {
    execFile(process.execPath, args, { cwd, env, timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ exitCode: code, output: `${stdout}${stderr}`.trim() });
    });
  });
}

/** The final stage of a Dockerfile as read from the file, without building it. */
export interface FinalImage {
  /** Every ARG of every stage, with its default: a --build-arg must name one of them. */
  args: Map<string, string | undefined>;
  env: Map<string, string>;
  exposed: number[];
  volumes: string[];
  workdir: string | undefined;
  cmd: string[];
  healthcheck: boolean;
}

/** Replaces `$NAME` and `${NAME}` as Docker does in ENV values (only the plain forms are used). */
function dockerSubstitute(text: string, vars: Map<string, string | undefined>): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (_, a, b) => vars.get(a ?? b) ?? '',
  );
}

/**
 * What the image a Dockerfile builds runs with, read from the file alone (nothing is built): the
 * instructions of its last stage (the runtime image), ENV values resolved against the build args
 * given and the ARG defaults. For the checks of compose.yaml and of the pages' docker commands,
 * which need the image's facts but not its build (`reproduceImage` builds it).
 */
export function finalImage(
  context: string,
  dockerfile: string,
  buildArgs: Record<string, string> = {},
): FinalImage {
  const parsed = DockerfileParser.parse(readFileSync(resolve(context, dockerfile), 'utf8'));
  const instructions = parsed.getInstructions();
  const lastFrom = instructions.findLastIndex((i) => i.getKeyword() === 'FROM');
  const stage: Instruction[] = instructions.slice(lastFrom + 1);
  const args = new Map<string, string | undefined>();
  // ARGs before the first FROM are declared for every stage; a stage sees them once it redeclares them.
  const declared = new Map<string, string | undefined>();
  for (const arg of parsed.getInitialARGs()) {
    const property = arg.getProperty();
    if (property) declared.set(property.getName(), property.getValue() ?? undefined);
  }
  const vars = new Map<string, string | undefined>();
  const image: FinalImage = {
    args,
    env: new Map(),
    exposed: [],
    volumes: [],
    workdir: undefined,
    cmd: [],
    healthcheck: false,
  };
  // Every ARG of every stage: a --build-arg must name one of them.
  for (const instruction of instructions) {
    if (instruction.getKeyword() !== 'ARG') continue;
    const property = (instruction as unknown as { getProperty(): any }).getProperty();
    if (property) args.set(property.getName(), property.getValue() ?? undefined);
  }
  for (const instruction of stage) {
    const keyword = instruction.getKeyword();
    if (keyword === 'ARG') {
      const property = (instruction as unknown as { getProperty(): any }).getProperty();
      if (!property) continue;
      const name = property.getName();
      vars.set(name, buildArgs[name] ?? property.getValue() ?? declared.get(name));
    } else if (keyword === 'ENV') {
      for (const property of (instruction as Env).getProperties()) {
        const value = dockerSubstitute(property.getValue() ?? '', vars);
        image.env.set(property.getName(), value);
        vars.set(property.getName(), value);
      }
    } else if (keyword === 'EXPOSE') {
      image.exposed.push(...instruction.getArguments().map((a) => Number.parseInt(a.getValue(), 10)));
    } else if (keyword === 'VOLUME') {
      const text = instruction.getArgumentsContent() ?? '';
      image.volumes.push(...(text.trim().startsWith('[') ? JSON.parse(text) : text.trim().split(/\s+/)));
    } else if (keyword === 'WORKDIR') {
      image.workdir = instruction.getArguments()[0]?.getValue();
    } else if (keyword === 'CMD') {
      const strings = (instruction as Cmd as JSONInstruction).getJSONStrings();
      if (strings.length === 0) throw new Error(`${dockerfile}: CMD is not in exec (JSON) form`);
      image.cmd = strings.map((s) => s.getJSONValue());
    } else if (keyword === 'HEALTHCHECK') {
      image.healthcheck = instruction.getArguments()[0]?.getValue().toUpperCase() === 'CMD';
    }
  }
  return image;
}
