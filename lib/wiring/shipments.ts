import type { ShipmentsConfig } from '../config.ts';
import { createDynamoShipmentRepository } from '../shipments/dynamodb.ts';
import type { ShipmentDeps } from '../shipments/shipments.ts';
import { documentClient } from './shared.ts';

export function shipmentDeps(config: ShipmentsConfig): ShipmentDeps {
  return {
    shipments: createDynamoShipmentRepository({
      client: documentClient(config.data),
      tableName: config.shipmentsTable,
    }),
  };
}
