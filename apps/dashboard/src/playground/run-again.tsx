import './run-again.css';
import { Link } from '@tanstack/react-router';

/** Opens the playground with a call's target and input filled in, to make the call again. */
export function RunAgainLink({ target, input }: { target: string; input: Record<string, unknown> }) {
  return (
    <Link to="/playground" search={{ target, input }} className="link-button">
      Run again
    </Link>
  );
}
