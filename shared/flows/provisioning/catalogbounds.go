package provisioning

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Bounds on catalog numbers. Each is far above any EC2 instance type (the largest today have 1,920
// vCPUs, 32 TiB of memory, 16 GPUs, a few hundred pods and cost a few hundred dollars an hour), so a
// real catalog always passes, while a typo or a hostile file (a negative capacity, 1e308 dollars) is
// refused before it reaches the solver, whose sums must stay finite and within int64.
const (
	// maxCatalogCPUMillis is 100,000 vCPUs.
	maxCatalogCPUMillis = 100_000 * 1000
	// maxCatalogMiB bounds memory, ephemeral storage and hugepages: 1 PiB.
	maxCatalogMiB = 1 << 30
	// maxCatalogPods bounds pod density.
	maxCatalogPods = 100_000
	// maxCatalogGPUs bounds the GPU count.
	maxCatalogGPUs = 1024
	// maxCatalogExtended bounds extended resources counted in units (GPUs, ENIs, Neuron cores, EFA
	// interfaces...).
	maxCatalogExtended = 1_000_000
	// MaxCatalogPrice is the highest hourly price an offering may have, in dollars.
	MaxCatalogPrice = 100_000.0
	// maxReservationCapacity bounds how many more instances one capacity reservation takes.
	maxReservationCapacity = 1_000_000
)

// checkBounds checks the numbers of an entry: every count non-negative and within the bounds above,
// every float finite.
func (e CatalogEntry) checkBounds() error {
	if err := checkInt("cpuMillis", e.CPUMillis, maxCatalogCPUMillis); err != nil {
		return err
	}
	if err := checkInt("memoryMiB", e.MemoryMiB, maxCatalogMiB); err != nil {
		return err
	}
	if err := checkInt("pods", e.Pods, maxCatalogPods); err != nil {
		return err
	}
	if err := checkInt("gpus", e.GPUs, maxCatalogGPUs); err != nil {
		return err
	}
	if e.Capacity != nil {
		if err := e.Capacity.checkBounds(); err != nil {
			return fmt.Errorf("capacity.%w", err)
		}
	}
	if e.Allocatable != nil {
		if err := e.Allocatable.checkBounds(); err != nil {
			return fmt.Errorf("allocatable.%w", err)
		}
	}
	return nil
}

func (a ResourceAmounts) checkBounds() error {
	if err := checkInt("cpuMillis", a.CPUMillis, maxCatalogCPUMillis); err != nil {
		return err
	}
	if err := checkFloat("memoryMiB", a.MemoryMiB, maxCatalogMiB); err != nil {
		return err
	}
	if err := checkFloat("ephemeralStorageMiB", a.EphemeralStorageMiB, maxCatalogMiB); err != nil {
		return err
	}
	if err := checkInt("pods", a.Pods, maxCatalogPods); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(a.Extended)) {
		// Hugepages are counted in bytes, like memory; other extended resources are counts.
		limit := int64(maxCatalogExtended)
		if strings.HasPrefix(name, "hugepages-") {
			limit = maxCatalogMiB * mib
		}
		if err := checkInt("extended."+name, a.Extended[name], limit); err != nil {
			return err
		}
	}
	return nil
}

// checkPrice checks an offering's hourly price: finite, not negative, at most MaxCatalogPrice.
func checkPrice(price float64) error {
	switch {
	case math.IsNaN(price) || math.IsInf(price, 0):
		return fmt.Errorf("price %v is not a number", price)
	case price < 0:
		return fmt.Errorf("price %v is negative", price)
	case price > MaxCatalogPrice:
		return fmt.Errorf("price %v is too large (at most %v dollars an hour)", price, MaxCatalogPrice)
	}
	return nil
}

func checkInt(field string, v, limit int64) error {
	switch {
	case v < 0:
		return fmt.Errorf("%s %d is negative", field, v)
	case v > limit:
		return fmt.Errorf("%s %d is too large (at most %d)", field, v, limit)
	}
	return nil
}

func checkFloat(field string, v, limit float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%s %v is not a number", field, v)
	case v < 0:
		return fmt.Errorf("%s %v is negative", field, v)
	case v > limit:
		return fmt.Errorf("%s %v is too large (at most %v)", field, v, limit)
	}
	return nil
}
