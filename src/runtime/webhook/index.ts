/**
 * `ts-operator-sdk/webhook`: the webhook HTTPS server, admission
 * (`CustomDefaulter`, `CustomValidator`, `AdmissionDeniedError`) and
 * conversion webhooks.
 * This file is only the package's public surface.
 */
export type { HttpHandler } from '../httpserver/server.js';
export { WebhookServer, type WebhookServerOptions, DEFAULT_WEBHOOK_PORT, DEFAULT_WEBHOOK_CERT_DIR } from './server.js';
export {
  AdmissionDeniedError,
  type AdmissionDeniedOptions,
  type AdmissionContext,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionWarnings,
  type CustomDefaulter,
  type CustomValidator,
  type ValidationResult,
  type GroupVersionKind,
} from './admission.js';
export { CONVERSION_PATH, type SpokeConversion, type ConversionOptions } from './conversion.js';
