package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	karpsched "sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// toKarpenterInstanceTypes converts a Nodewright catalog into Karpenter's instance types: the same
// capacity, an overhead (as kube-reserved) equal to capacity minus Nodewright's allocatable so that
// both schedulers see the same allocatable, one offering per Nodewright offering with its price,
// and the well-known label requirements (instance type, arch, os, zone, capacity type...).
func toKarpenterInstanceTypes(types []*scheduling.InstanceType) ([]*cloudprovider.InstanceType, error) {
	out := make([]*cloudprovider.InstanceType, 0, len(types))
	for _, it := range types {
		kit, err := toKarpenterInstanceType(it)
		if err != nil {
			return nil, err
		}
		out = append(out, kit)
	}
	return out, nil
}

func toKarpenterInstanceType(it *scheduling.InstanceType) (*cloudprovider.InstanceType, error) {
	if it == nil {
		return nil, fmt.Errorf("instance type: nil entry in the catalog")
	}
	if len(it.Offerings) == 0 {
		return nil, fmt.Errorf("instance type %q: offerings: none, Karpenter could never launch it", it.Name)
	}
	reqs := karpsched.NewRequirements()
	for _, key := range it.Requirements.Keys() {
		r := it.Requirements.Get(key)
		if r.Operator() != scheduling.OpIn || !karpv1.WellKnownLabels.Has(key) {
			continue
		}
		reqs.Add(karpsched.NewRequirement(key, corev1.NodeSelectorOpIn, r.Values()...))
	}
	overhead := resourceList(it.Capacity.Sub(it.Allocatable))
	for name, q := range overhead {
		if q.Sign() < 0 {
			return nil, fmt.Errorf("instance type %q: allocatable %s exceeds capacity", it.Name, name)
		}
	}
	kit := &cloudprovider.InstanceType{
		Name:         it.Name,
		Requirements: reqs,
		Capacity:     resourceList(it.Capacity),
		Overhead:     &cloudprovider.InstanceTypeOverhead{KubeReserved: overhead},
	}
	for _, o := range it.Offerings {
		if o.ReservationID != "" {
			return nil, fmt.Errorf("instance type %q: offering %s/%s: reservationID: capacity reservations are not compared", it.Name, o.Zone, o.CapacityType)
		}
		labels := map[string]string{karpv1.CapacityTypeLabelKey: o.CapacityType, corev1.LabelTopologyZone: o.Zone}
		kit.Offerings = append(kit.Offerings, &cloudprovider.Offering{
			Requirements: karpsched.NewLabelRequirements(labels),
			Price:        o.Price,
			Available:    o.Available,
		})
	}
	return kit, nil
}

// resourceList converts Nodewright resources (CPU in millis, bytes, counts) to a ResourceList.
func resourceList(r scheduling.Resources) corev1.ResourceList {
	out := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(r.CPU, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(r.Memory, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(r.EphemeralStorage, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(r.Pods, resource.DecimalSI),
	}
	for name, v := range r.Extended {
		out[corev1.ResourceName(name)] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	return out
}

// karpenterNodePool is a NodePool like Nodewright's NodePool("default") of the benchmarks: no
// requirements, no taints, and limits far above any input (as in Karpenter's own benchmark).
func karpenterNodePool(name string) *karpv1.NodePool {
	np := &karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("nodepool-" + name)},
		Spec: karpv1.NodePoolSpec{
			Limits: karpv1.Limits{
				corev1.ResourceCPU:    resource.MustParse("10000000"),
				corev1.ResourceMemory: resource.MustParse("10000000Gi"),
			},
		},
	}
	np.Spec.Template.Spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{}
	np.Spec.Template.Spec.NodeClassRef = &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	return np
}
