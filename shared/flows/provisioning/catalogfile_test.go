package provisioning

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// m5xlarge is moto's m5.xlarge under the default node class.
func m5xlarge(t *testing.T) *scheduling.InstanceType {
	t.Helper()
	info := scheduling.InstanceInfo{
		Name: "m5.xlarge", VCPUs: 4, MemoryMiB: 16384, Architecture: "amd64", CPUManufacturer: "Intel",
		MaxENIs: 4, IPv4PerENI: 15, Hypervisor: "nitro", NitroEnclaves: true,
	}
	it, err := scheduling.NewAWSInstanceType(info, scheduling.NodeClassConfig{}, []scheduling.Offering{
		{Zone: "us-east-1a", CapacityType: scheduling.CapacityTypeOnDemand, Price: 0.192, Available: true},
		{Zone: "us-east-1b", CapacityType: scheduling.CapacityTypeSpot, Price: 0.0714, Available: true},
	})
	require.NoError(t, err)
	return it
}

func TestCatalogFromDescribesTheType(t *testing.T) {
	f := CatalogFrom([]*scheduling.InstanceType{m5xlarge(t)})
	require.Len(t, f.InstanceTypes, 1)
	e := f.InstanceTypes[0]
	assert.Equal(t, "m5.xlarge", e.Name)
	assert.Equal(t, int64(4000), e.CPUMillis, "vCPUs as EC2 lists them")
	assert.Equal(t, int64(16384), e.MemoryMiB, "memory as EC2 lists it, before VM overhead")
	assert.Equal(t, int64(58), e.Pods, "ENI-limited: 4 × (15 − 1) + 2")
	assert.Equal(t, "amd64", e.Arch)
	assert.Equal(t, "linux", e.OS)
	assert.Equal(t, "intel", e.Labels[scheduling.LabelInstanceCPUManufacturer])
	assert.NotContains(t, e.Labels, scheduling.LabelZone, "zones come from the offerings")
	assert.NotContains(t, e.Labels, scheduling.LabelInstanceType, "the type label comes from the name")
	require.NotNil(t, e.Allocatable)
	assert.Equal(t, ResourceAmounts{CPUMillis: 3920, MemoryMiB: 14162, EphemeralStorageMiB: 17408, Pods: 58}, *e.Allocatable)
	assert.Len(t, e.Offerings, 2)
}

func TestCatalogRoundTrip(t *testing.T) {
	want := m5xlarge(t)
	var buf bytes.Buffer
	require.NoError(t, WriteCatalog(&buf, CatalogFrom([]*scheduling.InstanceType{want})))
	assert.True(t, strings.HasPrefix(buf.String(), "[\n{\"name\":\"m5.xlarge\""), "the catalog is a JSON array, one type per line: %s", buf.String())

	f, err := ReadCatalog("catalog.json", &buf)
	require.NoError(t, err)
	assert.False(t, f.ComputesAllocatable())
	types, err := f.Build(scheduling.NodeClassConfig{})
	require.NoError(t, err)
	require.Len(t, types, 1)
	assert.Equal(t, want, types[0])
}

func TestReadCatalog(t *testing.T) {
	const offering = `{"zone":"us-east-1a","capacityType":"spot","price":0.1,"available":true}`
	cases := []struct {
		name    string
		json    string
		types   int
		wantErr string
	}{
		{name: "object", json: `{"instanceTypes":[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"pods":29,"offerings":[` + offering + `]}]}`, types: 1},
		{name: "bare array", json: ` [{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"pods":29,"offerings":[` + offering + `]}]`, types: 1},
		{name: "not JSON", json: "instanceTypes: []", wantErr: "catalog.json: invalid catalog JSON"},
		{name: "unknown field", json: `{"instanceTypes":[{"name":"a.large","vcpus":2}]}`, wantErr: `unknown field "vcpus"`},
		{name: "empty", json: `{"instanceTypes":[]}`, wantErr: "catalog.json: no instance types"},
		{name: "no name", json: `[{"cpuMillis":2000,"memoryMiB":4096,"offerings":[` + offering + `]}]`, wantErr: "instanceTypes[0] (): name is empty"},
		{name: "no cpu", json: `[{"name":"a.large","memoryMiB":4096,"offerings":[` + offering + `]}]`, wantErr: "instanceTypes[0] (a.large): cpuMillis must be positive"},
		{name: "no offerings", json: `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096}]`, wantErr: "(a.large): no offerings"},
		{name: "bad zone id", json: `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","zoneID":"use1 az1","capacityType":"spot","price":1}]}]`, wantErr: `offerings[0]: zoneID "use1 az1" is not a label value`},
		{name: "bad capacity type", json: `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","capacityType":"cheap","price":1}]}]`, wantErr: `offerings[0]: capacityType "cheap" is not on-demand, spot or reserved`},
		{name: "negative price", json: `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","capacityType":"spot","price":-1}]}]`, wantErr: "offerings[0]: price -1 is negative"},
		{name: "reserved with count", json: `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","capacityType":"reserved","price":0,"available":true,"reservationID":"cr-1","reservationCapacity":3}]}]`, types: 1},
		{name: "full reservation", json: `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","capacityType":"reserved","price":0,"available":false,"reservationID":"cr-1"}]}]`, types: 1},
		{
			name:    "reserved without count",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[` + offering + `,{"zone":"z","capacityType":"reserved","price":0,"available":true,"reservationID":"cr-1"}]}]`,
			wantErr: "offerings[1]: reservationCapacity is missing or 0 on available reserved offering cr-1",
		},
		{
			name:    "reserved without id",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","capacityType":"reserved","price":0,"available":true,"reservationCapacity":1}]}]`,
			wantErr: "offerings[0]: reservationID is empty",
		},
		{
			name:    "negative count",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","capacityType":"reserved","price":0,"reservationID":"cr-1","reservationCapacity":-1}]}]`,
			wantErr: "offerings[0]: reservationCapacity -1 is negative",
		},
		{
			name:    "count on spot",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","capacityType":"spot","price":1,"reservationCapacity":2}]}]`,
			wantErr: "offerings[0]: reservationID and reservationCapacity are only for reserved offerings, not spot",
		},
		{
			name:    "negative capacity",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"capacity":{"cpuMillis":-2000,"memoryMiB":4096,"pods":29},"offerings":[` + offering + `]}]`,
			wantErr: "catalog.json: instanceTypes[0] (a.large): capacity.cpuMillis -2000 is negative",
		},
		{
			name:    "negative allocatable memory",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"allocatable":{"cpuMillis":1900,"memoryMiB":-1,"pods":29},"offerings":[` + offering + `]}]`,
			wantErr: "(a.large): allocatable.memoryMiB -1 is negative",
		},
		{
			name:    "memory beyond int64 bytes",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"capacity":{"cpuMillis":2000,"memoryMiB":1e300,"pods":29},"offerings":[` + offering + `]}]`,
			wantErr: "(a.large): capacity.memoryMiB 1e+300 is too large (at most 1.073741824e+09)",
		},
		{
			name:    "negative pods",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"pods":-1,"offerings":[` + offering + `]}]`,
			wantErr: "(a.large): pods -1 is negative",
		},
		{
			name:    "too many vCPUs",
			json:    `[{"name":"a.large","cpuMillis":9000000000000000000,"memoryMiB":4096,"offerings":[` + offering + `]}]`,
			wantErr: "(a.large): cpuMillis 9000000000000000000 is too large (at most 100000000)",
		},
		{
			name:    "negative GPUs",
			json:    `[{"name":"g.large","cpuMillis":2000,"memoryMiB":4096,"gpus":-1,"offerings":[` + offering + `]}]`,
			wantErr: "(g.large): gpus -1 is negative",
		},
		{
			name:    "negative extended resource",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"capacity":{"cpuMillis":2000,"memoryMiB":4096,"pods":29,"extended":{"vpc.amazonaws.com/pod-eni":-3}},"offerings":[` + offering + `]}]`,
			wantErr: "(a.large): capacity.extended.vpc.amazonaws.com/pod-eni -3 is negative",
		},
		{
			name: "hugepages counted in bytes",
			json: `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"capacity":{"cpuMillis":2000,"memoryMiB":4096,"pods":29,"extended":{"hugepages-2Mi":1073741824}},"offerings":[` + offering + `]}]`, types: 1,
		},
		{
			name:    "infinite price",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","capacityType":"spot","price":1e308}]}]`,
			wantErr: "offerings[0]: price 1e+308 is too large (at most 100000 dollars an hour)",
		},
		{
			name:    "reservation too large",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[{"zone":"z","capacityType":"reserved","price":0,"available":true,"reservationID":"cr-1","reservationCapacity":9000000000}]}]`,
			wantErr: "offerings[0]: reservationCapacity 9000000000 is too large (at most 1000000)",
		},
		{
			name:    "duplicate",
			json:    `[{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[` + offering + `]},{"name":"a.large","cpuMillis":2000,"memoryMiB":4096,"offerings":[` + offering + `]}]`,
			wantErr: `instanceTypes[1]: duplicate name "a.large"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ReadCatalog("catalog.json", strings.NewReader(tc.json))
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, f.InstanceTypes, tc.types)
		})
	}
}

func TestCatalogRoundTripKeepsReservationCounts(t *testing.T) {
	want := m5xlarge(t)
	reserved := scheduling.Offering{Zone: "us-east-1a", CapacityType: scheduling.CapacityTypeReserved, Price: 0.192e-7, Available: true,
		ReservationID: "cr-0abc", ReservationCapacity: 2}
	want = scheduling.NewInstanceType(want.Name, want.Requirements.Labels(), want.Capacity, want.Allocatable, append(want.Offerings, reserved))
	var buf bytes.Buffer
	require.NoError(t, WriteCatalog(&buf, CatalogFrom([]*scheduling.InstanceType{want})))
	assert.Contains(t, buf.String(), `"reservationID":"cr-0abc","reservationCapacity":2`)

	f, err := ReadCatalog("catalog.json", &buf)
	require.NoError(t, err)
	types, err := f.Build(scheduling.NodeClassConfig{})
	require.NoError(t, err)
	require.Len(t, types, 1)
	assert.Equal(t, want.Offerings, types[0].Offerings)
	got, ok := types[0].LaunchOffering(scheduling.Requirements{}, nil)
	require.True(t, ok)
	assert.Equal(t, reserved, got, "the read catalog launches into the reservation")
}
