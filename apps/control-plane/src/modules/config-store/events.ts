/**
 * Published by the replica that answered `POST …/configs/reload` after it applied the new
 * configuration; every other replica loads and applies it too. Carries `{ origin }`, the
 * publishing replica's id, since a PostgreSQL bus also delivers to the publisher.
 */
export const CONFIG_RELOAD_TOPIC = 'config_reload';
