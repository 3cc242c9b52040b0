/**
 * Platforms (docs/platforms.md): the OAuth clients that act for customers, registered by the
 * carrier's operator; their records are lib/clients/clients.ts's PlatformClient.
 */
import { type Scope, SELF_SERVICE_CLIENT_SCOPES } from '../scopes.ts';

/**
 * What a platform may hold, and a customer's administrator approve: what the administrator could
 * give an API client of its own (the route scopes but the administrator's).
 */
export const PLATFORM_SCOPES: readonly Scope[] = SELF_SERVICE_CLIENT_SCOPES;

export const isPlatformScope = (scope: Scope) => PLATFORM_SCOPES.includes(scope);
