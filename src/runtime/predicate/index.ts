/**
 * `ts-operator-sdk/predicate`: event filters for watches
 * (`generationChangedPredicate`, `labelSelectorPredicate`, `and`/`or`/`not`).
 * One naming style: controller-runtime's names in camelCase, as values
 * (`generationChangedPredicate`) or factories (`labelSelectorPredicate(...)`).
 * This file is only the package's public surface.
 */
export {
  newPredicateFuncs,
  generationChangedPredicate,
  resourceVersionChangedPredicate,
  labelChangedPredicate,
  annotationChangedPredicate,
  labelSelectorPredicate,
  and,
  or,
  not,
  type Predicate,
  type WatchedEvent,
} from './predicate.js';
