import { readShipmentsConfig } from '../lib/config.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { created } from '../lib/http/responses.ts';
import { createShipment, ShipmentRequestSchema } from '../lib/shipments/shipments.ts';
import { shipmentDeps } from '../lib/wiring/shipments.ts';

const deps = shipmentDeps(readShipmentsConfig());

/** POST /api/v1/shipments */
export const handler = endpoint({
  body: ShipmentRequestSchema,
  authorized: true,
  route: 'createShipment',
  dpop: deps.dpop,
  handle: async ({ body, caller }) => {
    const { parcelNumber, status, createdAt } = await createShipment(deps, caller, body);
    return created({ parcelNumber, status, createdAt }, `/api/v1/tracking/${parcelNumber}`);
  },
});
