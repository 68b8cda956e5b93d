//! Kubernetes `resource.Quantity` parsing.
//!
//! Counterpart: `k8s.io/apimachinery/pkg/api/resource/quantity.go` (v1.35).
//! (Being written: parsing with every suffix and rounding up to milli-units.)
