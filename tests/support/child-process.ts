import { type ChildProcess, spawn } from 'node:child_process';

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /**
   * Resolves with the first match of `pattern` in the output; rejects, quoting the output, when
   * the process exits first or nothing matches within `timeoutMs`.
   */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves when the process has exited, with how. */
  exited: Promise<ExitStatus>;
  /**
   * Sends `signal` and waits for the exit. Whatever is still running `graceMs` later (the process
   * or anything it started) is killed with its whole process group, so no server outlives a test.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<ExitStatus>;
}

/**
 * Starts `node <args>` as its own process group and records its output. The group lets stop()
 * reach the servers that start.mjs spawns even when start.mjs itself no longer answers.
 */
export function startNode(args: string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): RunningProcess {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const record = (chunk: string) => {
    output += chunk;
    for (const listener of [...listeners]) listener();
  };
  child.stdout!.setEncoding('utf8').on('data', record);
  child.stderr!.setEncoding('utf8').on('data', record);
  let status: ExitStatus | undefined;
  const exited = new Promise<ExitStatus>((done) => {
    child.once('exit', (code, signal) => {
      status = { code, signal };
      done(status);
      for (const listener of [...listeners]) listener();
    });
  });

  function waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const finish = (error?: Error, match?: RegExpMatchArray) => {
        clearTimeout(timer);
        listeners.delete(check);
        if (error) reject(error);
        else resolve(match!);
      };
      const check = () => {
        const match = pattern.exec(output);
        if (match) return finish(undefined, match);
        if (status) {
          const how = status.signal ?? `code ${status.code}`;
          finish(new Error(`exited (${how}) before printing ${pattern}; its output:\n${output}`));
        }
      };
      const timer = setTimeout(
        () => finish(new Error(`no ${pattern} within ${timeoutMs} ms; output so far:\n${output}`)),
        timeoutMs,
      );
      listeners.add(check);
      check();
    });
  }

  async function stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<ExitStatus> {
    if (!status) child.kill(signal);
    const timer = setTimeout(() => killGroup(child), graceMs);
    const result = await exited;
    clearTimeout(timer);
    // The process may be gone while something it started is not (a server it failed to stop).
    killGroup(child);
    return result;
  }

  return { child, output: () => output, waitFor, exited, stop };
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // The group is already empty.
  }
}

/** What a finished process did. */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `file` with `args` to its end and answers its exit code and output, stdin closed unless
 * `input` is given. Runs as its own process group: past `timeoutMs` (30 s) the whole group is
 * killed and the promise rejects, quoting what it wrote.
 */
export function runToEnd(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
    const timeoutMs = options.timeoutMs ?? 30_000;
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      reject(
        new Error(
          `\`${[file, ...args].join(' ')}\` ran longer than ${timeoutMs} ms; stdout: ${stdout} stderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
