import { readShipmentsConfig } from '../lib/config.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { ok } from '../lib/http/responses.ts';
import { TrackingParamsSchema, trackShipment } from '../lib/shipments/shipments.ts';
import { shipmentDeps } from '../lib/wiring/shipments.ts';

const deps = shipmentDeps(readShipmentsConfig());

/** GET /api/v1/tracking/{parcelNumber} */
export const handler = endpoint({
  params: TrackingParamsSchema,
  authorized: true,
  route: 'trackShipment',
  dpop: deps.dpop,
  handle: async ({ params, caller }) => {
    const { parcelNumber, status, createdAt, shipment } = await trackShipment(
      deps,
      caller,
      params.parcelNumber,
    );
    return ok({ parcelNumber, status, createdAt, shipment });
  },
});
