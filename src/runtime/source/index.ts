/**
 * `ts-operator-sdk/source`: where a controller's events come from besides the
 * cache (`ChannelSource`).
 * This file is only the package's public surface.
 */
export { ChannelSource, type EventSource, type SourceEventHandler } from './source.js';
