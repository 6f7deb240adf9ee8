/**
 * A build cache for reproduced images (image-steps.ts), as a build machine's docker keeps its
 * layers: an image reproduced again from the same inputs is the one built before, not a second
 * build. CI runs the image tests once per database, and the two builds were the same work twice
 * (about 165 s of a pass on a two-core machine); the image's behaviour is still checked in every
 * pass, on the database of that pass.
 *
 * - The key is everything docker's cache would look at, and more: the Dockerfile's text, the build
 *   args, the RUN-only environment, the cache mount targets, every file .dockerignore lets into the
 *   context (path, mode and content), and the host's Node.js (which stands for the base image). Any
 *   change builds the whole image again; docker would reuse the layers before the first change.
 * - An image is built where it stays (`<cacheDir>/<name>/stages`): its builds write absolute paths
 *   of where they ran, so a build is only ever used at the path it was made at.
 * - A hit gets fresh VOLUMEs (the image's content at those paths, as docker fills a new anonymous
 *   volume), and is used only if nothing else in the final stage changed since it was built (a
 *   manifest of every path, with each file's mode, size and modification time); otherwise it is
 *   built again.
 * - One build of each Dockerfile is kept per context; a newer one replaces it. A lock per image
 *   (proper-lockfile) makes a second reproduction of the same image wait for the first.
 * - The default place is the repository's node_modules/.cache, which `npm ci` starts afresh.
 */
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import lockfile from 'proper-lockfile';
import {
  contextFiles,
  type ImageRecord,
  imageOf,
  type ReproducedImage,
  type ReproduceOptions,
  reproduceImage,
} from './image-steps.ts';

export const IMAGE_CACHE = fileURLToPath(
  new URL('../../node_modules/.cache/switchyard-images', import.meta.url),
);

export interface CachedImage extends ReproducedImage {
  /** True when the image was built by an earlier reproduction (its timings are that build's). */
  cached: boolean;
}

interface Entry {
  record: ImageRecord;
  /** The final stage's manifest when it was built, volumes left out. */
  manifest: string;
}

/** reproduceImage, or the image it built before from the same inputs; see the header. */
export async function reproduceCachedImage(
  options: Omit<ReproduceOptions, 'scratch'> & { cacheDir?: string },
): Promise<CachedImage> {
  const cacheDir = options.cacheDir ?? IMAGE_CACHE;
  const context = resolve(options.context);
  const family = `${basename(context)}-${options.dockerfile}`.replace(/[^A-Za-z0-9.]+/g, '-');
  const name = `${family}-${inputsKey(options).slice(0, 16)}`;
  const dir = join(cacheDir, name);
  const saved = join(dir, 'image.json');
  mkdirSync(cacheDir, { recursive: true });
  const release = await lockfile.lock(dir, {
    realpath: false,
    lockfilePath: `${dir}.lock`,
    // A build takes minutes; the lock is renewed while it runs and taken over if its holder died.
    retries: { retries: 1_000, minTimeout: 200, maxTimeout: 2_000 },
  });
  try {
    if (existsSync(saved)) {
      const entry = JSON.parse(readFileSync(saved, 'utf8')) as Entry;
      if (manifestOf(entry.record) === entry.manifest) {
        restoreVolumes(dir, entry.record);
        return { ...imageOf(entry.record), cached: true };
      }
    }
    rmSync(dir, { recursive: true, force: true });
    // An older build of the same Dockerfile (its family and a key, nothing longer), unless another
    // reproduction holds it.
    const sameFamily = new RegExp(`^${family.replace(/\./g, '\\.')}-[0-9a-f]{16}$`);
    for (const other of readdirSync(cacheDir)) {
      if (sameFamily.test(other) && other !== name && !existsSync(join(cacheDir, `${other}.lock`))) {
        rmSync(join(cacheDir, other), { recursive: true });
      }
    }
    const image = await reproduceImage({ ...options, scratch: join(dir, 'stages') });
    const record: ImageRecord = {
      stages: image.stages,
      cmd: image.cmd,
      healthcheck: image.healthcheck,
      stopSignal: image.stopSignal,
      volumes: image.volumes,
      exposed: image.exposed,
      timings: image.timings,
    };
    image.volumes.forEach((volume, i) => {
      cpSync(image.hostPath(volume), join(dir, 'volumes', String(i)), { recursive: true });
    });
    const entry: Entry = { record, manifest: manifestOf(record) };
    // Written last, and whole: a build that failed or was killed half-way leaves no image.json.
    writeFileSync(`${saved}.tmp`, JSON.stringify(entry));
    renameSync(`${saved}.tmp`, saved);
    return { ...image, cached: false };
  } finally {
    await release();
  }
}

/** A hash of every input the image is built from (see the header). */
function inputsKey(options: Omit<ReproduceOptions, 'scratch'>): string {
  const context = resolve(options.context);
  const hash = createHash('sha256');
  const sorted = (values: Record<string, string> = {}) => Object.entries(values).sort();
  hash.update(
    JSON.stringify({
      node: [process.version, process.platform, process.arch],
      dockerfile: options.dockerfile,
      text: readFileSync(resolve(context, options.dockerfile), 'utf8'),
      buildArgs: sorted(options.buildArgs),
      runEnv: sorted(options.runEnv),
      cacheMounts: Object.keys(options.cacheMounts ?? {}).sort(),
    }),
  );
  for (const file of contextFiles(context)) {
    const path = join(context, file);
    const mode = lstatSync(path).isSymbolicLink() ? 'link' : (statSync(path).mode & 0o777).toString(8);
    hash.update(`\0${file}\0${mode}\0`);
    hash.update(createHash('sha256').update(readFileSync(path)).digest('hex'));
  }
  return hash.digest('hex');
}

/** Every path of the final stage with its type, mode, size and modification time, VOLUMEs aside. */
function manifestOf(record: ImageRecord): string {
  const image = imageOf(record);
  const volumes = new Set(record.volumes.map((volume) => image.hostPath(volume)));
  const lines: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (volumes.has(path)) continue;
      const stat = lstatSync(path);
      // A directory's own time moves whenever an entry comes or goes, which its listing shows.
      if (stat.isDirectory()) {
        lines.push(`${path}\t${stat.mode}`);
        walk(path);
      } else lines.push(`${path}\t${stat.mode}\t${stat.size}\t${stat.mtimeMs}`);
    }
  };
  if (existsSync(image.final.root)) walk(image.final.root);
  else return 'missing';
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/** Puts the image's own content back at each VOLUME, as a new container's anonymous volume has. */
function restoreVolumes(dir: string, record: ImageRecord): void {
  const image = imageOf(record);
  record.volumes.forEach((volume, i) => {
    const at = image.hostPath(volume);
    rmSync(at, { recursive: true, force: true });
    cpSync(join(dir, 'volumes', String(i)), at, { recursive: true });
  });
}
