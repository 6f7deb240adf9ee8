/**
 * The build cache of reproduced images (image-cache.ts), on small Dockerfiles in contexts of their
 * own: an image is reused only when every input is the same and its final stage is as it was
 * built, at the path it was built at, with fresh volumes; and two reproductions at once build once.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CachedImage, reproduceCachedImage } from './image-cache.ts';
import { contextFiles } from './image-steps.ts';

let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'sy-image-cache-'));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * A context whose image records when its RUN step ran (a build's own timestamp, which a reused
 * image keeps) and copies `a.txt`; its /app/data is a VOLUME the image ships with a file in.
 */
function smallContext(name: string, text = 'a'): string {
  const context = join(scratch, name);
  mkdirSync(context, { recursive: true });
  writeFileSync(join(context, 'a.txt'), text);
  writeFileSync(join(context, '.dockerignore'), 'ignored.txt\n');
  writeFileSync(
    join(context, 'Dockerfile'),
    [
      'FROM node:20-bookworm-slim',
      'ARG FLAVOUR=plain',
      'WORKDIR /app',
      'COPY a.txt ./',
      'RUN node -e "process.stdout.write(String(process.hrtime.bigint()))" > built-at.txt && echo $FLAVOUR > flavour.txt',
      'RUN mkdir -p data && echo seed > data/seed.txt',
      'VOLUME /app/data',
      'CMD ["node", "-e", "require(\'fs\').writeFileSync(process.argv[1] ?? \'data/written.txt\', \'x\')"]',
      '',
    ].join('\n'),
  );
  return context;
}

function reproduce(
  context: string,
  cacheDir: string,
  buildArgs?: Record<string, string>,
  dockerfile = 'Dockerfile',
): Promise<CachedImage> {
  return reproduceCachedImage({ context, dockerfile, cacheDir, buildArgs });
}

const builtAt = (image: CachedImage) => readFileSync(image.hostPath('/app/built-at.txt'), 'utf8');

describe('the build cache of reproduced images', () => {
  it('serves the same inputs again from the build before, at the path it was built at, without running its steps', async () => {
    const context = smallContext('same');
    const cacheDir = join(scratch, 'cache-same');
    const first = await reproduce(context, cacheDir);
    const second = await reproduce(context, cacheDir);
    expect([first.cached, second.cached]).toEqual([false, true]);
    expect(second.final.root).toBe(first.final.root);
    expect(builtAt(second)).toBe(builtAt(first));
    expect(second.timings).toEqual(first.timings);
    expect(second.cmd).toEqual(first.cmd);
    expect(second.volumes).toEqual(['/app/data']);
    // A file .dockerignore keeps out of the context is not an input.
    writeFileSync(join(context, 'ignored.txt'), 'anything');
    expect((await reproduce(context, cacheDir)).cached).toBe(true);
  });

  it('builds again when a context file, the Dockerfile or a build argument changes, keeping the newest build only', async () => {
    const context = smallContext('changes');
    const cacheDir = join(scratch, 'cache-changes');
    const firstBuiltAt = builtAt(await reproduce(context, cacheDir));
    // Another Dockerfile whose name extends this one's: its build is not this one's to replace.
    writeFileSync(join(context, 'Dockerfile-dev'), readFileSync(join(context, 'Dockerfile')));
    const dev = await reproduce(context, cacheDir, undefined, 'Dockerfile-dev');

    writeFileSync(join(context, 'a.txt'), 'b');
    const changedFile = await reproduce(context, cacheDir);
    expect(changedFile.cached).toBe(false);
    expect(readFileSync(changedFile.hostPath('/app/a.txt'), 'utf8')).toBe('b');
    expect(builtAt(changedFile)).not.toBe(firstBuiltAt);

    writeFileSync(
      join(context, 'Dockerfile'),
      `${readFileSync(join(context, 'Dockerfile'), 'utf8')}EXPOSE 8080\n`,
    );
    const changedDockerfile = await reproduce(context, cacheDir);
    expect(changedDockerfile.cached).toBe(false);
    expect(changedDockerfile.exposed).toEqual(['8080']);

    const changedArg = await reproduce(context, cacheDir, { FLAVOUR: 'spicy' });
    expect(changedArg.cached).toBe(false);
    expect(readFileSync(changedArg.hostPath('/app/flavour.txt'), 'utf8')).toBe('spicy\n');
    expect((await reproduce(context, cacheDir, { FLAVOUR: 'spicy' })).cached).toBe(true);

    // One build of each Dockerfile is kept: the newest of this one, and the other one's.
    expect(readdirSync(cacheDir).filter((name) => !name.endsWith('.lock'))).toHaveLength(2);
    expect(existsSync(dev.final.root)).toBe(true);
  });

  it('gives each reuse fresh volumes, and builds again when a run changed the image outside them', async () => {
    const context = smallContext('runs');
    const cacheDir = join(scratch, 'cache-runs');
    const first = await reproduce(context, cacheDir);
    const run = first.start();
    expect(await run.process.exited).toEqual({ code: 0, signal: null });
    expect(readdirSync(first.hostPath('/app/data')).sort()).toEqual(['seed.txt', 'written.txt']);

    // As a new container's anonymous volume: the image's own content, nothing a run wrote.
    const second = await reproduce(context, cacheDir);
    expect(second.cached).toBe(true);
    expect(readdirSync(second.hostPath('/app/data'))).toEqual(['seed.txt']);

    // A write beside the code changes the image itself: it is not reused.
    writeFileSync(second.hostPath('/app/beside-the-code.txt'), 'x');
    const third = await reproduce(context, cacheDir);
    expect(third.cached).toBe(false);
    expect(readdirSync(third.hostPath('/app')).sort()).toEqual([
      'a.txt',
      'built-at.txt',
      'data',
      'flavour.txt',
    ]);
  });

  it('lets one of two reproductions at once build, and the other wait for that build', async () => {
    const context = smallContext('together');
    const cacheDir = join(scratch, 'cache-together');
    const [one, two] = await Promise.all([reproduce(context, cacheDir), reproduce(context, cacheDir)]);
    expect([one.cached, two.cached].sort()).toEqual([false, true]);
    expect(builtAt(one)).toBe(builtAt(two));
  });
});

describe("the repository's build context", () => {
  it('holds no file git ignores: what builds and test runs write neither reaches an image nor changes its key', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    // Ignored directories (node_modules, dist) as one line each, ending in "/".
    const ignored = execFileSync(
      'git',
      ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory'],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
    )
      .toString()
      .split('\n')
      .filter(Boolean);
    const gitIgnores = (file: string) =>
      ignored.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry));
    expect(contextFiles(root).filter(gitIgnores)).toEqual([]);
  });
});
