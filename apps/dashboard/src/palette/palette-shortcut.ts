import { useEffect } from 'react';

/** Opens the palette: Ctrl-K or Cmd-K anywhere, and the header's button. */
export function usePaletteShortcut(open: () => void): void {
  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        open();
      }
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open]);
}
