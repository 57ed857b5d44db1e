package apis

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeOverlay (karpenter.sh/v1alpha1, alpha in Karpenter behind the NodeOverlay feature gate) changes what
// the scheduler believes about the instance types its requirements select: their price (an absolute
// price or an adjustment) and the extended resources they offer. Nodewright holds NodeOverlays in its
// configuration beside NodePools and EC2NodeClasses; shared/core/nodeoverlay applies them.
type NodeOverlay struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NodeOverlaySpec `json:"spec"`
	// Status is accepted so that objects read back from a cluster decode; Nodewright ignores it.
	Status NodeOverlayStatus `json:"status,omitempty"`

	// Origin is where the object was decoded from; it is not part of the manifest.
	Origin Origin `json:"-"`
}

// NodeOverlaySpec is what a NodeOverlay selects and what it changes.
type NodeOverlaySpec struct {
	// Requirements select the instance types and offerings the overlay applies to, over the labels of the
	// instance type, its offerings (zone, capacity type…) and the NodePool's template labels. At most 100.
	Requirements []corev1.NodeSelectorRequirement `json:"requirements,omitempty"`
	// PriceAdjustment changes the price: "+0.5" or "-0.5" adds to it, "+10%" or "-15%" scales it (never
	// below -100%). A price never goes below 0.
	PriceAdjustment *string `json:"priceAdjustment,omitempty"`
	// Price replaces the price (a non-negative decimal, "0.42"). Price and PriceAdjustment exclude each
	// other.
	Price *string `json:"price,omitempty"`
	// Capacity sets extended resources on the selected instance types (not cpu, memory,
	// ephemeral-storage or pods).
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Weight orders overlays: a higher weight wins. 1–10000; unset means 0. Overlays of equal weight that
	// change the same offering's price (or the same resource) conflict: see shared/core/nodeoverlay.
	Weight *int32 `json:"weight,omitempty"`
}

// NodeOverlayStatus is the status Karpenter writes (a ValidationSucceeded condition).
type NodeOverlayStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodeOverlayList is a list of NodeOverlays.
type NodeOverlayList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeOverlay `json:"items"`
}
