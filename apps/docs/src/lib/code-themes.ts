import { type BundledTheme, bundledThemes, type ThemeRegistration } from 'shiki';

/** WCAG AA for normal text; code is small, so every token must reach it. */
export const MINIMUM_CONTRAST = 4.5;

type Rgb = [number, number, number];

function parseHex(hex: string, background: Rgb): Rgb {
  const digits = hex.replace(/^#/, '');
  const full =
    digits.length === 3 || digits.length === 4 ? [...digits].map((digit) => digit + digit).join('') : digits;
  const channels = [0, 2, 4].map((start) => Number.parseInt(full.slice(start, start + 2), 16)) as Rgb;
  if (full.length !== 8) return channels;
  // A translucent colour is seen over the code background, so that is the colour to measure.
  const alpha = Number.parseInt(full.slice(6, 8), 16) / 255;
  return channels.map((value, i) => Math.round(value * alpha + background[i]! * (1 - alpha))) as Rgb;
}

function toHex(rgb: Rgb): string {
  return `#${rgb.map((value) => value.toString(16).padStart(2, '0')).join('')}`;
}

function luminance([r, g, b]: Rgb): number {
  const linear = (value: number) => {
    const s = value / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** The WCAG contrast ratio of two colours. */
export function contrastRatio(a: Rgb, b: Rgb): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/**
 * `colour` moved toward black (on a light background) or white (on a dark one) just far enough to
 * reach `minimum` contrast against `background`; a colour that already reaches it is returned as is,
 * so the theme keeps its look and only its faint tokens (comments, punctuation) get stronger.
 */
export function readableColour(colour: string, background: string, minimum = MINIMUM_CONTRAST): string {
  const bg = parseHex(background, [0, 0, 0]);
  const start = parseHex(colour, bg);
  if (contrastRatio(start, bg) >= minimum) return colour;
  const target: Rgb = luminance(bg) > 0.5 ? [0, 0, 0] : [255, 255, 255];
  for (let step = 1; step <= 50; step += 1) {
    const t = step / 50;
    const mixed = start.map((value, i) => Math.round(value + (target[i]! - value) * t)) as Rgb;
    // A little over the line, so rounding in the browser's colour pipeline cannot drop it under.
    if (contrastRatio(mixed, bg) >= minimum + 0.1) return toHex(mixed);
  }
  return toHex(target);
}

/**
 * A bundled Shiki theme with every foreground colour made readable on `background`, the colour the
 * site paints behind code blocks (the theme's own background is not used).
 */
export async function readableTheme(name: BundledTheme, background: string): Promise<ThemeRegistration> {
  const theme = (await bundledThemes[name]()).default as ThemeRegistration;
  const fix = (value: unknown) =>
    typeof value === 'string' && value.startsWith('#') ? readableColour(value, background) : value;
  return {
    ...theme,
    name: `${theme.name}-readable`,
    colors: Object.fromEntries(
      Object.entries(theme.colors ?? {}).map(([key, value]) =>
        key.endsWith('foreground') ? [key, fix(value)] : [key, value],
      ),
    ) as Record<string, string>,
    tokenColors: (theme.tokenColors ?? []).map((rule) =>
      rule.settings.foreground
        ? { ...rule, settings: { ...rule.settings, foreground: fix(rule.settings.foreground) as string } }
        : rule,
    ),
  };
}
