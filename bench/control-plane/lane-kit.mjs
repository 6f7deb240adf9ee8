// What the execution benches share: the agent they call, and the CPU PostgreSQL spent for them.
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The node id bench-agent.mjs registers and heartbeats as. */
export const NODE_ID = 'bench-agent';

/**
 * Forks bench-agent.mjs (environment inherited, so BENCH_AGENT_WORK_MS reaches it) and resolves
 * once it listens: its process, for IPC, and its URL.
 */
export async function forkBenchAgent() {
  const child = fork(fileURLToPath(new URL('./bench-agent.mjs', import.meta.url)), [], { execArgv: [] });
  const url = await new Promise((resolve) => {
    const listening = (message) => {
      if (message.event !== 'listening') return;
      child.off('message', listening);
      resolve(message.url);
    };
    child.on('message', listening);
  });
  return { child, url };
}

/**
 * CPU ticks (1/100 s, user + system) of each local PostgreSQL backend serving database `name`, by
 * pid, read from Linux /proc (a backend's command line names its database). Empty elsewhere, or
 * when the server runs on another machine.
 */
export function postgresBackendTicks(name) {
  const ticks = new Map();
  if (!name) return ticks;
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return ticks;
  }
  for (const pid of pids) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.startsWith('postgres: ') || !cmdline.includes(` ${name} `)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {}
  }
  return ticks;
}

/**
 * CPU time in ms of the local PostgreSQL backends serving database `name`; NaN when none is seen.
 * Backends come and go between readings; a measured step's share is the difference of two sums,
 * which undercounts a backend that exited meanwhile (the pools keep theirs open, so rarely).
 */
export function postgresCpuMs(name) {
  const ticks = postgresBackendTicks(name);
  if (ticks.size === 0) return Number.NaN;
  let sum = 0;
  for (const value of ticks.values()) sum += value;
  return sum * 10;
}

/**
 * The whole machine's CPU time so far in ms, from Linux /proc/stat's first line: `busy` (every
 * process and the kernel, whatever ran) and `all` (busy plus idle and waiting on the disk). Time
 * the hypervisor gave to other guests (steal) is in neither: this machine could not use it.
 * Undefined elsewhere.
 */
export function machineCpuMs() {
  let line;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  } catch {
    return undefined;
  }
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (ticks of 1/100 s);
  // guest time is already counted in user.
  const [user, nice, system, idle, iowait, irq, softirq] = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busy: busy * 10, all: (busy + idle + iowait) * 10 };
}

/**
 * Registers bench-agent.mjs with the control plane as an SDK agent does and brings it to `ready`.
 * `post(path, body, expected)` sends a request and throws on any other status; `functions` are
 * the reasoners to register (bench-agent.mjs serves `echo` and `work`).
 */
export async function registerBenchAgent(post, agentUrl, functions = ['echo', 'work']) {
  await post(
    '/api/v1/nodes/register',
    {
      id: NODE_ID,
      version: '1.0.0',
      base_url: agentUrl,
      deployment_type: 'long_running',
      reasoners: functions.map((id) => ({ id, input_schema: { type: 'object' }, tags: ['bench'] })),
      skills: [],
    },
    201,
  );
  await post(
    `/api/v1/nodes/${NODE_ID}/heartbeat`,
    { status: 'starting', version: '1.0.0', timestamp: new Date().toISOString() },
    200,
  );
  await post(`/api/v1/nodes/${NODE_ID}/lifecycle/status`, { status: 'ready', version: '1.0.0' }, 200);
}
