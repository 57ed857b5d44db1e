// Package settings is the deployment-wide behaviour Karpenter takes from its environment (MIN_VALUES_POLICY,
// PREFERENCE_POLICY, VM_MEMORY_OVERHEAD_PERCENT, RESERVED_ENIS, BATCH_IDLE_DURATION, BATCH_MAX_DURATION,
// FEATURE_GATES) and Nodewright from the CDK app's context values of the same meaning: the values, their
// defaults, their validation and Karpenter's feature gate syntax. The CDK app validates them at synth and
// stores them with the configuration (state.KindSettings); the functions read them with the NodePools.
//
// Pure core: standard library only.
package settings
