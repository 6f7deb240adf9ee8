import './run-again.css';
import { Link } from '@tanstack/react-router';

/**
 * Opens the playground with a call's target and input filled in, to make the call again. An input
 * that is not a JSON object (an agent may report any JSON for a call it ran itself) goes as text,
 * for the editor to show and refuse.
 */
export function RunAgainLink({ target, input }: { target: string; input: unknown }) {
  const search = {
    target,
    input:
      typeof input === 'object' && input !== null && !Array.isArray(input)
        ? (input as Record<string, unknown>)
        : JSON.stringify(input),
  };
  return (
    <Link to="/playground" search={search} className="link-button">
      Run again
    </Link>
  );
}
