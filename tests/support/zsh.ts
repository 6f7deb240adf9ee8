import { DEBIAN_INSTALL_TIMEOUT_MS, ensureDebianPackages, isExecutable } from './debian-packages.ts';

/** Where Debian's `zsh` package puts the shell. */
export const ZSH = '/usr/bin/zsh';

/** Debian's package the CLI's completion test needs to run its zsh script. */
export const ZSH_PACKAGES = ['zsh'] as const;

/** apt-get downloads a few MB and may first wait for another apt-get to release the dpkg lock. */
export const ZSH_INSTALL_TIMEOUT_MS = DEBIAN_INSTALL_TIMEOUT_MS;

/**
 * Makes sure zsh is installed, so the test of `switchyard completion zsh` runs its script in the
 * shell it is for. As with Chromium (tests/support/chromium.ts), a root user on a machine with
 * apt-get (a fresh container, CI) gets it installed once; otherwise the error says what to run.
 */
export async function ensureZsh(): Promise<void> {
  await ensureDebianPackages({
    packages: ZSH_PACKAGES,
    present: () => isExecutable(ZSH),
    howToInstall: "Install Debian's zsh package: `sudo apt-get install zsh`.",
  });
}
