package provisioning

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// CatalogFile is the instance-type catalog as `nodewright plan --instance-types` reads it and
// `nodewright catalog export` writes it: a JSON array of entries (the format the scheduling issue fixes).
// ReadCatalog also accepts the object form {"instanceTypes": [...]}.
type CatalogFile struct {
	InstanceTypes []CatalogEntry `json:"instanceTypes"`
}

// CatalogEntry is one instance type. The flat fields describe the machine as EC2 lists it (vCPUs as
// millicores, nominal memory, pod density, GPU count). Capacity and Allocatable are what a node of the
// type offers; when Allocatable is absent it is computed with the AWS allocatable model from the flat
// fields and the EC2NodeClass's settings, and when present it is used as given (see
// CatalogEntry.InstanceType for the dimensions it may leave out). Labels are the node's labels except
// zone, capacity type and instance type, which come from Name and Offerings.
type CatalogEntry struct {
	Name        string                `json:"name"`
	CPUMillis   int64                 `json:"cpuMillis"`
	MemoryMiB   int64                 `json:"memoryMiB"`
	Pods        int64                 `json:"pods"`
	GPUs        int64                 `json:"gpus,omitempty"`
	Arch        string                `json:"arch,omitempty"`
	OS          string                `json:"os,omitempty"`
	Labels      map[string]string     `json:"labels,omitempty"`
	Capacity    *ResourceAmounts      `json:"capacity,omitempty"`
	Allocatable *ResourceAmounts      `json:"allocatable,omitempty"`
	Offerings   []scheduling.Offering `json:"offerings"`
}

// ResourceAmounts is a resource vector in the units people read: millicores, MiB (fractional when the
// byte count is not a whole MiB) and counts.
type ResourceAmounts struct {
	CPUMillis           int64            `json:"cpuMillis"`
	MemoryMiB           float64          `json:"memoryMiB"`
	EphemeralStorageMiB float64          `json:"ephemeralStorageMiB,omitempty"`
	Pods                int64            `json:"pods"`
	Extended            map[string]int64 `json:"extended,omitempty"`
}

const mib = 1 << 20

func amountsFrom(r scheduling.Resources) *ResourceAmounts {
	a := &ResourceAmounts{
		CPUMillis: r.CPU, MemoryMiB: float64(r.Memory) / mib, EphemeralStorageMiB: float64(r.EphemeralStorage) / mib, Pods: r.Pods,
	}
	for k, v := range r.Extended {
		if v == 0 {
			continue
		}
		if a.Extended == nil {
			a.Extended = map[string]int64{}
		}
		a.Extended[k] = v
	}
	return a
}

// Resources converts back to the scheduler's form; MiB convert to bytes exactly.
func (a ResourceAmounts) Resources() scheduling.Resources {
	r := scheduling.Resources{
		CPU: a.CPUMillis, Memory: int64(math.Round(a.MemoryMiB * mib)), EphemeralStorage: int64(math.Round(a.EphemeralStorageMiB * mib)), Pods: a.Pods,
	}
	if len(a.Extended) > 0 {
		r.Extended = map[string]int64{}
		for k, v := range a.Extended {
			r.Extended[k] = v
		}
	}
	return r
}

// ReadCatalog decodes a catalog file, rejecting unknown fields, and checks each entry: a name, unique
// names, positive CPU and memory, every number within the bounds of catalogbounds.go, and at least one
// offering with a zone, a known capacity type and a finite, non-negative, bounded price; a zoneID, when
// given, is a label value. A reserved
// offering names its reservation (reservationID) and, when available, says how many more instances it
// takes (reservationCapacity ≥ 1: a full reservation is written with available false, never as an
// unlimited one); other offerings carry neither. name labels the errors.
func ReadCatalog(name string, r io.Reader) (*CatalogFile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var f CatalogFile
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if len(trimmed) > 0 && trimmed[0] == '[' {
		err = dec.Decode(&f.InstanceTypes)
	} else {
		err = dec.Decode(&f)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: invalid catalog JSON: %w", name, err)
	}
	if len(f.InstanceTypes) == 0 {
		return nil, fmt.Errorf("%s: no instance types", name)
	}
	seen := map[string]bool{}
	var errs []error
	for i, e := range f.InstanceTypes {
		if err := e.check(); err != nil {
			errs = append(errs, fmt.Errorf("%s: instanceTypes[%d] (%s): %w", name, i, e.Name, err))
		}
		if seen[e.Name] {
			errs = append(errs, fmt.Errorf("%s: instanceTypes[%d]: duplicate name %q", name, i, e.Name))
		}
		seen[e.Name] = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &f, nil
}

func (e CatalogEntry) check() error {
	switch {
	case e.Name == "":
		return errors.New("name is empty")
	case e.CPUMillis <= 0 && e.Capacity == nil:
		return errors.New("cpuMillis must be positive")
	case e.MemoryMiB <= 0 && e.Capacity == nil:
		return errors.New("memoryMiB must be positive")
	case len(e.Offerings) == 0:
		return errors.New("no offerings")
	}
	if err := e.checkBounds(); err != nil {
		return err
	}
	for j, o := range e.Offerings {
		switch {
		case o.Zone == "":
			return fmt.Errorf("offerings[%d]: zone is empty", j)
		case o.ZoneID != "" && len(validation.IsValidLabelValue(o.ZoneID)) > 0:
			return fmt.Errorf("offerings[%d]: zoneID %q is not a label value: %s", j, o.ZoneID, strings.Join(validation.IsValidLabelValue(o.ZoneID), "; "))
		case !slices.Contains([]string{scheduling.CapacityTypeOnDemand, scheduling.CapacityTypeSpot, scheduling.CapacityTypeReserved}, o.CapacityType):
			return fmt.Errorf("offerings[%d]: capacityType %q is not on-demand, spot or reserved", j, o.CapacityType)
		}
		if err := checkPrice(o.Price); err != nil {
			return fmt.Errorf("offerings[%d]: %w", j, err)
		}
		if err := checkReservation(o); err != nil {
			return fmt.Errorf("offerings[%d]: %w", j, err)
		}
	}
	return nil
}

// checkReservation checks the reservation fields of an offering.
func checkReservation(o scheduling.Offering) error {
	reserved := o.CapacityType == scheduling.CapacityTypeReserved
	switch {
	case !reserved && (o.ReservationID != "" || o.ReservationCapacity != 0):
		return fmt.Errorf("reservationID and reservationCapacity are only for reserved offerings, not %s", o.CapacityType)
	case !reserved:
		return nil
	case o.ReservationID == "":
		return errors.New("reservationID is empty: a reserved offering names its capacity reservation")
	case o.ReservationCapacity < 0:
		return fmt.Errorf("reservationCapacity %d is negative", o.ReservationCapacity)
	case o.ReservationCapacity > maxReservationCapacity:
		return fmt.Errorf("reservationCapacity %d is too large (at most %d)", o.ReservationCapacity, maxReservationCapacity)
	case o.Available && o.ReservationCapacity == 0:
		return fmt.Errorf("reservationCapacity is missing or 0 on available reserved offering %s: give how many more instances it takes, or set available to false when it is full", o.ReservationID)
	}
	return nil
}

// WriteCatalog writes f as a JSON array with one instance type per line, so that diffs stay readable.
func WriteCatalog(w io.Writer, f *CatalogFile) error {
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, e := range f.InstanceTypes {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encoding instance type %s: %w", e.Name, err)
		}
		buf.Write(line)
		if i < len(f.InstanceTypes)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// derivedLabels are the labels NewInstanceType derives from the name and offerings; entries omit them.
var derivedLabels = map[string]bool{
	scheduling.LabelInstanceType: true, scheduling.LabelZone: true, scheduling.LabelZoneID: true, scheduling.LabelCapacityType: true,
}

// derivedValue reports whether a single-valued requirement is one NewInstanceType derives when the
// label is absent: instance-capability-flex "false" (keys it requires absent are not single-valued).
func derivedValue(key, value string) bool {
	return key == scheduling.LabelInstanceCapabilityFlex && value == "false"
}

// CatalogFrom describes instance types as catalog entries, sorted by name. Labels are the single-valued
// requirements of each type; capacity and allocatable are kept exactly.
func CatalogFrom(types []*scheduling.InstanceType) *CatalogFile {
	f := &CatalogFile{}
	for _, it := range types {
		labels := map[string]string{}
		for key, req := range it.Requirements {
			if vals := req.Values(); !derivedLabels[key] && req.Operator() == scheduling.OpIn && len(vals) == 1 && !derivedValue(key, vals[0]) {
				labels[key] = vals[0]
			}
		}
		e := CatalogEntry{
			Name: it.Name, CPUMillis: it.Capacity.CPU, MemoryMiB: it.Capacity.Memory / mib, Pods: it.Capacity.Pods,
			Arch: labels[scheduling.LabelArch], OS: labels[scheduling.LabelOS], Labels: labels,
			Capacity: amountsFrom(it.Capacity), Allocatable: amountsFrom(it.Allocatable), Offerings: slices.Clone(it.Offerings),
		}
		if v, err := strconv.ParseInt(labels[scheduling.LabelInstanceCPU], 10, 64); err == nil {
			e.CPUMillis = v * 1000
		}
		if v, err := strconv.ParseInt(labels[scheduling.LabelInstanceMemory], 10, 64); err == nil {
			e.MemoryMiB = v
		}
		if v, err := strconv.ParseInt(labels[scheduling.LabelInstanceGPUCount], 10, 64); err == nil {
			e.GPUs = v
		}
		f.InstanceTypes = append(f.InstanceTypes, e)
	}
	slices.SortFunc(f.InstanceTypes, func(a, b CatalogEntry) int { return cmp.Compare(a.Name, b.Name) })
	return f
}
