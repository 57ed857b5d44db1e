package schedulingtest

import (
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Zones are the zones of built offerings.
var Zones = []string{"us-west-2a", "us-west-2b", "us-west-2c"}

const gib = int64(1) << 30

// InstanceTypes builds Karpenter's benchmark catalog: type i has i+1 vCPUs, 2(i+1) GiB, 10(i+1) pods,
// and costs 0.1 per vCPU plus 0.1 per GiB per hour in each zone, spot and on-demand alike. Allocatable
// subtracts the AWS kube-reserved CPU, 255 MiB + 11 MiB per pod (capped at 110 pods) of kube-reserved
// memory, and the 100 MiB eviction threshold.
func InstanceTypes(n int) []*scheduling.InstanceType {
	out := make([]*scheduling.InstanceType, n)
	for i := range out {
		vcpu := int64(i + 1)
		memGiB := 2 * vcpu
		pods := 10 * vcpu
		capacity := scheduling.Resources{CPU: vcpu * 1000, Memory: memGiB * gib, EphemeralStorage: 20 * gib, Pods: pods}
		alloc := capacity.Sub(scheduling.Resources{
			CPU:              scheduling.KubeReservedCPU(vcpu),
			Memory:           scheduling.KubeReservedMemory(min(pods, 110)) + 100<<20,
			EphemeralStorage: 3 * gib,
		})
		price := 0.1*float64(vcpu) + 0.1*float64(memGiB)
		var offerings []scheduling.Offering
		for _, z := range Zones {
			for _, ct := range []string{scheduling.CapacityTypeSpot, scheduling.CapacityTypeOnDemand} {
				offerings = append(offerings, scheduling.Offering{Zone: z, CapacityType: ct, Price: price, Available: true})
			}
		}
		name := fmt.Sprintf("fake-it-%d", i)
		labels := map[string]string{
			scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux",
			scheduling.LabelInstanceCPU: strconv.FormatInt(vcpu, 10), scheduling.LabelInstanceMemory: strconv.FormatInt(memGiB*1024, 10),
			scheduling.LabelInstanceFamily: "fake", scheduling.LabelInstanceSize: strconv.Itoa(i),
		}
		out[i] = scheduling.NewInstanceType(name, labels, capacity, alloc, offerings)
	}
	return out
}

// size is one instance size with its network limits.
type size struct {
	name      string
	vcpu      int64
	enis, ips int64
}

var sizes = []size{
	{"large", 2, 3, 10}, {"xlarge", 4, 4, 15}, {"2xlarge", 8, 4, 15}, {"4xlarge", 16, 8, 30},
	{"8xlarge", 32, 8, 30}, {"12xlarge", 48, 8, 30}, {"16xlarge", 64, 15, 50}, {"24xlarge", 96, 15, 50},
}

// family is an instance family with memory per vCPU and on-demand price per vCPU-hour.
type family struct {
	name        string
	arch        string
	memPerCPU   int64
	pricePerCPU float64
}

var families = []family{
	{"c5", "amd64", 2, 0.0425}, {"c6i", "amd64", 2, 0.0425}, {"c7i", "amd64", 2, 0.0446}, {"c6g", "arm64", 2, 0.034}, {"c7g", "arm64", 2, 0.0363},
	{"m5", "amd64", 4, 0.048}, {"m6i", "amd64", 4, 0.048}, {"m7i", "amd64", 4, 0.0504}, {"m6g", "arm64", 4, 0.0385}, {"m7g", "arm64", 4, 0.0408},
	{"r5", "amd64", 8, 0.063}, {"r6i", "amd64", 8, 0.063}, {"r7i", "amd64", 8, 0.0661}, {"r6g", "arm64", 8, 0.0504}, {"r7g", "arm64", 8, 0.0536},
}

// RealisticInstanceTypes builds a catalog shaped like EC2's general-purpose offer: c, m and r families
// of generations 5 to 7, amd64 and arm64 (Graviton), sizes large to 24xlarge, in three zones. Allocatable
// comes from the AWS model (AL2023 defaults). On-demand prices follow each family's price per vCPU;
// spot costs 30–40% of on-demand, varying deterministically by type and zone.
func RealisticInstanceTypes() []*scheduling.InstanceType {
	var out []*scheduling.InstanceType
	for _, f := range families {
		for _, s := range sizes {
			name := f.name + "." + s.name
			od := f.pricePerCPU * float64(s.vcpu)
			var offerings []scheduling.Offering
			for _, z := range Zones {
				h := fnv.New32a()
				h.Write([]byte(name + z))
				spot := od * (0.30 + float64(h.Sum32()%1000)/10000)
				offerings = append(offerings,
					scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeSpot, Price: round4(spot), Available: true},
					scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeOnDemand, Price: round4(od), Available: true})
			}
			info := scheduling.InstanceInfo{
				Name: name, VCPUs: s.vcpu, MemoryMiB: s.vcpu * f.memPerCPU * 1024, Architecture: f.arch,
				MaxENIs: s.enis, IPv4PerENI: s.ips, Hypervisor: "nitro",
			}
			it, err := scheduling.NewAWSInstanceType(info, scheduling.NodeClassConfig{}, offerings)
			if err != nil {
				panic(err)
			}
			out = append(out, it)
		}
	}
	return out
}

func round4(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }

// SmallCatalog is a hand-sized catalog for tests that assert exact choices. Allocatable is capacity
// less 100m CPU and 512Mi memory. Prices per hour (on-demand / spot), offered in us-west-2a and
// us-west-2b:
//
//	small      amd64  2 CPU  4Gi  20 pods  0.10 / 0.04
//	arm-medium arm64  4 CPU  8Gi  40 pods  0.16 / 0.06
//	medium     amd64  4 CPU  8Gi  40 pods  0.20 / 0.08
//	large      amd64  8 CPU 16Gi  80 pods  0.40 / 0.16
//	gpu        amd64  8 CPU 32Gi  80 pods  1.00 / 0.40  1 nvidia.com/gpu
func SmallCatalog() []*scheduling.InstanceType {
	type spec struct {
		name     string
		arch     string
		cpu, mem int64
		od, spot float64
		gpus     int64
	}
	specs := []spec{
		{"small", "amd64", 2, 4, 0.10, 0.04, 0},
		{"arm-medium", "arm64", 4, 8, 0.16, 0.06, 0},
		{"medium", "amd64", 4, 8, 0.20, 0.08, 0},
		{"large", "amd64", 8, 16, 0.40, 0.16, 0},
		{"gpu", "amd64", 8, 32, 1.00, 0.40, 1},
	}
	var out []*scheduling.InstanceType
	for _, s := range specs {
		capacity := scheduling.Resources{CPU: s.cpu * 1000, Memory: s.mem * gib, EphemeralStorage: 20 * gib, Pods: 10 * s.cpu}
		if s.gpus > 0 {
			capacity.Extended = map[string]int64{scheduling.ResourceNVIDIAGPU: s.gpus}
		}
		alloc := capacity.Sub(scheduling.Resources{CPU: 100, Memory: 512 << 20})
		var offerings []scheduling.Offering
		for _, z := range Zones[:2] {
			offerings = append(offerings,
				scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeSpot, Price: s.spot, Available: true},
				scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeOnDemand, Price: s.od, Available: true})
		}
		labels := map[string]string{scheduling.LabelArch: s.arch, scheduling.LabelOS: "linux", scheduling.LabelInstanceFamily: s.name}
		out = append(out, scheduling.NewInstanceType(s.name, labels, capacity, alloc, offerings))
	}
	return out
}
