import type { ShipmentsConfig } from '../config.ts';
import type { BindingDeps } from '../dpop/binding.ts';
import { createDynamoShipmentRepository } from '../shipments/dynamodb.ts';
import type { ShipmentDeps } from '../shipments/shipments.ts';
import { documentClient, dpopDeps } from './shared.ts';

export function shipmentDeps(config: ShipmentsConfig): ShipmentDeps & { readonly dpop: BindingDeps } {
  const client = documentClient(config.data);
  return {
    shipments: createDynamoShipmentRepository({ client, tableName: config.shipmentsTable }),
    dpop: dpopDeps({ client, tableName: config.sessionsTable }),
  };
}
