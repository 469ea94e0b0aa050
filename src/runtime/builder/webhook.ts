import type { KubernetesObject } from '../api/object.js';
import type { Kind } from '../api/kinds.js';
import type { Manager } from '../manager/manager.js';
import {
  admissionHandler,
  defaultingAdmit,
  validatingAdmit,
  type CustomDefaulter,
  type CustomValidator,
} from '../webhook/admission.js';
import type { ConversionOptions, SpokeConversion } from '../webhook/conversion.js';
import { mutatingWebhookPath, validatingWebhookPath } from '../webhook/paths.js';

/**
 * controller-runtime's webhook builder:
 * `newWebhookManagedBy(mgr, Memcached).withDefaulter(d).withValidator(v).complete()`.
 * Registers on `mgr.getWebhookServer()`, which starts with the manager.
 */
export class WebhookBuilder<T extends KubernetesObject> {
  private defaulter?: CustomDefaulter<T>;
  private validator?: CustomValidator<T>;
  private spokes?: Array<SpokeConversion<KubernetesObject, KubernetesObject>>;

  constructor(
    private readonly mgr: Manager,
    private readonly kind: Kind<T>,
  ) {}

  /** Serves `defaulter` at {@link mutatingWebhookPath}. */
  withDefaulter(defaulter: CustomDefaulter<T>): this {
    this.defaulter = defaulter;
    return this;
  }

  /** Serves `validator` at {@link validatingWebhookPath}. */
  withValidator(validator: CustomValidator<T>): this {
    this.validator = validator;
    return this;
  }

  /**
   * Makes this kind the conversion hub (call it on the storage version) and
   * serves `/convert` for it and the given spokes. The CRD needs
   * `conversion.strategy: Webhook` pointing at `/convert` (kubebuilder's
   * CRD patch; envtest's `webhookInstallOptions.conversionCRDs`).
   */
  withConversion<Spokes extends KubernetesObject[]>(options: ConversionOptions<T, Spokes>): this {
    this.spokes = [...(options.spokes as unknown as Array<SpokeConversion<KubernetesObject, KubernetesObject>>)];
    return this;
  }

  /** Registers every configured webhook; throws if none is, or a path is taken. */
  complete(): void {
    if (!this.defaulter && !this.validator && !this.spokes) {
      throw new Error(
        `newWebhookManagedBy(mgr, ${this.kind.kind}) has nothing to serve: call withDefaulter, withValidator or withConversion before complete()`,
      );
    }
    const server = this.mgr.getWebhookServer();
    const log = this.mgr.getLogger();
    if (this.defaulter) {
      const path = mutatingWebhookPath(this.kind);
      server.register(path, admissionHandler(defaultingAdmit(this.defaulter), log.child({ webhook: path })));
    }
    if (this.validator) {
      const path = validatingWebhookPath(this.kind);
      server.register(path, admissionHandler(validatingAdmit(this.validator), log.child({ webhook: path })));
    }
    if (this.spokes) {
      server.conversions.register(this.kind, this.spokes);
      server.ensureConversionHandler();
    }
  }
}

/** Starts a {@link WebhookBuilder} for `kind` (the hub version, when adding conversion). */
export function newWebhookManagedBy<T extends KubernetesObject>(mgr: Manager, kind: Kind<T>): WebhookBuilder<T> {
  return new WebhookBuilder(mgr, kind);
}
