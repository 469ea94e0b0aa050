/**
 * `ts-operator-sdk/builder`: the fluent builders `newControllerManagedBy` and
 * `newWebhookManagedBy`, and the webhook paths they serve.
 * This file is only the package's public surface.
 */
export { newControllerManagedBy, ControllerBuilder } from './controller.js';
export { newWebhookManagedBy, WebhookBuilder } from './webhook.js';
export { mutatingWebhookPath, validatingWebhookPath } from '../webhook/paths.js';
