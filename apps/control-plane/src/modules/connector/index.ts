/** The connector API. Today this holds its settings: the token and the capabilities it grants. */
export { CONNECTOR_CAPABILITIES, type ConnectorCapability, connectorSettings } from './settings.ts';
