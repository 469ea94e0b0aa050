/**
 * `ts-operator-sdk/predicate`: event filters for watches
 * (`GenerationChangedPredicate`, `labelSelectorPredicate`, `and`/`or`/`not`).
 * This file is only the package's public surface.
 */
export {
  newPredicateFuncs,
  GenerationChangedPredicate,
  ResourceVersionChangedPredicate,
  LabelChangedPredicate,
  AnnotationChangedPredicate,
  labelSelectorPredicate,
  and,
  or,
  not,
  type Predicate,
  type WatchedEvent,
} from './predicate.js';
