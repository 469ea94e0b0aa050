import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubernetesObject } from '../api/object.js';
import { parseApiVersion, type Kind } from '../api/kinds.js';
import type { Logger } from '../log/log.js';
import { readBoundedJson, RequestBodyError } from './body.js';

/** The conversion webhook's path, as controller-runtime serves it and kubebuilder's CRD patch names it. */
export const CONVERSION_PATH = '/convert';
/** The same bound as admission requests: a ConversionReview of a list can be large. */
const MAX_CONVERSION_REQUEST_BYTES = 7 * 1024 * 1024;

/**
 * One spoke version of a hub-and-spoke conversion: how its objects become
 * hub objects and back. The functions get a copy they may change; the
 * runtime sets `apiVersion` and `kind` on what they return, and keeps the
 * input's `metadata` if the result has none.
 */
export interface SpokeConversion<Hub extends KubernetesObject, Spoke extends KubernetesObject> {
  /** The spoke version's kind (same group and kind name as the hub, another version). */
  kind: Kind<Spoke>;
  /** Converts a spoke object to the hub version. */
  convertTo(spoke: Spoke): Hub | Promise<Hub>;
  /** Converts a hub object to this spoke version. */
  convertFrom(hub: Hub): Spoke | Promise<Spoke>;
}

/** The spokes of a hub kind; see `WebhookBuilder.withConversion`. */
export interface ConversionOptions<Hub extends KubernetesObject, Spokes extends KubernetesObject[]> {
  /** Every version other than the hub, each with its two conversion functions. */
  spokes: { [I in keyof Spokes]: SpokeConversion<Hub, Spokes[I]> };
}

interface HubEntry {
  hub: Kind;
  spokes: Map<string, SpokeConversion<KubernetesObject, KubernetesObject>>;
}

/** A ConversionReview's request, apiextensions.k8s.io/v1. */
interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: KubernetesObject[];
}

/**
 * The hub kinds registered on one webhook server, and the `/convert`
 * handler that converts through them: a spoke goes to the hub and from the
 * hub to the desired spoke, so n versions need 2(n-1) functions, not n².
 */
export class ConversionRegistry {
  private readonly hubs = new Map<string, HubEntry>();

  /** Registers `hub` (the storage version) and its spokes; a group and kind can have only one hub. */
  register(hub: Kind, spokes: Array<SpokeConversion<KubernetesObject, KubernetesObject>>): void {
    const key = `${hub.group}/${hub.kind}`;
    if (this.hubs.has(key))
      throw new Error(
        `conversion for ${hub.kind}.${hub.group} is already registered: call withConversion once, on the hub (storage) version`,
      );
    const entry: HubEntry = { hub, spokes: new Map() };
    for (const spoke of spokes) {
      if (spoke.kind.group !== hub.group || spoke.kind.kind !== hub.kind) {
        throw new Error(
          `spoke ${spoke.kind.apiVersion}/${spoke.kind.kind} is not a version of ${hub.apiVersion}/${hub.kind}: spokes must share the hub's group and kind`,
        );
      }
      if (spoke.kind.version === hub.version || entry.spokes.has(spoke.kind.version)) {
        throw new Error(
          `version ${spoke.kind.version} of ${hub.kind} is listed twice (as the hub or another spoke): list each non-hub version once`,
        );
      }
      entry.spokes.set(spoke.kind.version, spoke);
    }
    this.hubs.set(key, entry);
  }

  /** Converts one object to `desiredAPIVersion`; throws a message naming the version that cannot be converted. */
  async convert(object: KubernetesObject, desiredAPIVersion: string): Promise<KubernetesObject> {
    if (!object || typeof object !== 'object' || !object.apiVersion || !object.kind)
      throw new Error('an object without apiVersion and kind cannot be converted');
    const from = parseApiVersion(object.apiVersion);
    const to = parseApiVersion(desiredAPIVersion);
    const entry = this.hubs.get(`${from.group}/${object.kind}`);
    if (!entry)
      throw new Error(
        `no conversion is registered for ${object.kind}.${from.group}: call newWebhookManagedBy(mgr, <hub kind>).withConversion(...)`,
      );
    if (to.group !== from.group)
      throw new Error(
        `cannot convert ${object.kind} from group ${from.group} to ${to.group}: conversion stays within a group`,
      );
    if (from.version === to.version) return structuredClone(object);
    const spokeOf = (version: string): SpokeConversion<KubernetesObject, KubernetesObject> => {
      const spoke = entry.spokes.get(version);
      if (!spoke)
        throw new Error(
          `${object.kind}.${from.group} version ${version} is neither the hub (${entry.hub.version}) nor a registered spoke`,
        );
      return spoke;
    };
    let hubObject: KubernetesObject;
    if (from.version === entry.hub.version) hubObject = structuredClone(object);
    else
      hubObject = finish(await spokeOf(from.version).convertTo(structuredClone(object)), entry.hub.apiVersion, object);
    if (to.version === entry.hub.version) return hubObject;
    return finish(await spokeOf(to.version).convertFrom(structuredClone(hubObject)), desiredAPIVersion, object);
  }

  /** The `/convert` handler: ConversionReview in, ConversionReview out, every object or none. */
  handler(log: Logger): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
    return async (req, res) => {
      let request: ConversionRequest;
      try {
        const review = (await readBoundedJson(req, MAX_CONVERSION_REQUEST_BYTES)) as {
          kind?: string;
          request?: ConversionRequest;
        };
        request = review?.request as ConversionRequest;
        if (
          review?.kind !== 'ConversionReview' ||
          !request ||
          typeof request.uid !== 'string' ||
          typeof request.desiredAPIVersion !== 'string' ||
          !Array.isArray(request.objects)
        ) {
          throw new RequestBodyError(
            'the body is not a ConversionReview with a request (uid, desiredAPIVersion, objects)',
          );
        }
      } catch (err) {
        if (!(err instanceof RequestBodyError)) throw err;
        log.info({ err: err.message }, 'undecodable conversion request');
        res.statusCode = 400;
        if (err.closeConnection) res.setHeader('connection', 'close');
        res.end(`${err.message}\n`);
        return;
      }
      let response: object;
      try {
        const convertedObjects: KubernetesObject[] = [];
        for (const object of request.objects)
          convertedObjects.push(await this.convert(object, request.desiredAPIVersion));
        response = { uid: request.uid, convertedObjects, result: { status: 'Success' } };
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        log.error({ err, uid: request.uid, desiredAPIVersion: request.desiredAPIVersion }, 'conversion failed');
        response = { uid: request.uid, convertedObjects: [], result: { status: 'Failure', message } };
      }
      res.statusCode = 200;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response }));
    };
  }
}

/** Sets the target apiVersion and kind, and keeps the source metadata when the function returned none. */
function finish(result: KubernetesObject, apiVersion: string, source: KubernetesObject): KubernetesObject {
  if (!result || typeof result !== 'object')
    throw new Error(`a conversion function of ${source.kind} returned ${String(result)} instead of an object`);
  return { ...result, apiVersion, kind: source.kind, metadata: result.metadata ?? structuredClone(source.metadata) };
}
