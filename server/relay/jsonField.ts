// Moved to server/protocols/inbound/jsonField.ts (pure byte reading); kept so older imports still resolve.
export { topLevelObjectField, type FieldRead } from '../protocols/inbound/jsonField';
