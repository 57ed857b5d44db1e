package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestConvertedInstanceTypesKeepAllocatableAndPrices(t *testing.T) {
	for _, types := range [][]*scheduling.InstanceType{schedulingtest.InstanceTypes(5), schedulingtest.RealisticInstanceTypes()[:5]} {
		converted, err := toKarpenterInstanceTypes(types)
		require.NoError(t, err)
		require.Len(t, converted, len(types))
		for i, it := range types {
			kit := converted[i]
			assert.Equal(t, it.Name, kit.Name)
			alloc := kit.Allocatable()
			assert.Equal(t, it.Allocatable.CPU, alloc.Cpu().MilliValue(), it.Name)
			assert.Equal(t, it.Allocatable.Memory, alloc.Memory().Value(), it.Name)
			assert.Equal(t, it.Allocatable.Pods, alloc.Pods().Value(), it.Name)
			require.Len(t, kit.Offerings, len(it.Offerings))
			for j, o := range it.Offerings {
				assert.Equal(t, o.Price, kit.Offerings[j].Price)
				assert.Equal(t, o.Zone, kit.Offerings[j].Zone())
				assert.Equal(t, o.CapacityType, kit.Offerings[j].CapacityType())
			}
			assert.Equal(t, []string{it.Name}, kit.Requirements.Get(corev1.LabelInstanceTypeStable).Values())
			assert.Equal(t, it.Requirements.Get(scheduling.LabelArch).Values(), kit.Requirements.Get(corev1.LabelArchStable).Values())
		}
	}
}

func TestConvertRejectsTypesWithoutOfferings(t *testing.T) {
	it := schedulingtest.InstanceTypes(1)[0]
	it.Offerings = nil
	_, err := toKarpenterInstanceTypes([]*scheduling.InstanceType{it})
	require.ErrorContains(t, err, `instance type "fake-it-0": offerings`)
}

func TestConvertRejectsReservedOfferings(t *testing.T) {
	it := schedulingtest.InstanceTypes(1)[0]
	it.Offerings[0].ReservationID = "cr-1"
	_, err := toKarpenterInstanceTypes([]*scheduling.InstanceType{it})
	require.ErrorContains(t, err, "reservationID: capacity reservations are not compared")
}
