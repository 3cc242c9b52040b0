/**
 * Builds each function's dependencies from its configuration, once per container.
 * Handlers call these at module scope (top-level await), so clients, imported keys and the
 * dummy password hash exist before the first request and are shared by every request.
 */
import type { authorize } from './auth/authorizer.ts';
import {
  importSigningKey,
  importVerificationKeys,
  parseJwks,
  parsePrivateJwk,
  readKeyMaterial,
} from './auth/keys.ts';
import type { LoginDeps } from './auth/login.ts';
import { createPasswordVerifier } from './auth/passwords.ts';
import { createAccessTokenVerifier, createTokenIssuer } from './auth/tokens.ts';
import { createDocumentClient } from './aws/dynamodb.ts';
import type { AuthorizerConfig, LoginConfig, ShipmentsConfig } from './config.ts';
import { logger } from './log.ts';
import { createDynamoShipmentRepository } from './shipments/dynamodb.ts';
import type { ShipmentDeps } from './shipments/shipments.ts';
import { createDynamoAccountRepository } from './users/dynamodb.ts';

export async function loginDeps(config: LoginConfig): Promise<LoginDeps> {
  const signingKey = await importSigningKey(
    parsePrivateJwk(await readKeyMaterial(config.signingKey, config.data.region)),
  );
  return {
    users: createDynamoAccountRepository({
      client: createDocumentClient(config.data),
      tableName: config.accountsTable,
    }),
    passwords: createPasswordVerifier({ cost: config.bcryptCost }),
    tokens: createTokenIssuer({ signingKey, settings: config.tokens }),
  };
}

export async function authorizerDeps(config: AuthorizerConfig): Promise<Parameters<typeof authorize>[0]> {
  const keys = await importVerificationKeys(
    parseJwks(await readKeyMaterial(config.verificationKeys, config.region)),
  );
  return { verifier: createAccessTokenVerifier({ keys, settings: config.tokens }), logger };
}

export function shipmentDeps(config: ShipmentsConfig): ShipmentDeps {
  return {
    shipments: createDynamoShipmentRepository({
      client: createDocumentClient(config.data),
      tableName: config.shipmentsTable,
    }),
  };
}
