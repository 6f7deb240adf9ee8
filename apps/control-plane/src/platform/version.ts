import manifest from '../../package.json' with { type: 'json' };

/** The control plane's version, as its package.json states it (inlined by the build). */
export const VERSION: string = manifest.version;
