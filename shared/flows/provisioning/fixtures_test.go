package provisioning

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// instanceType builds an instance type of arch with on-demand and spot offerings in each zone, spot at
// spotFactor of price.
func instanceType(name, arch string, cpu int64, price float64, zones ...string) *scheduling.InstanceType {
	var offerings []scheduling.Offering
	for _, z := range zones {
		offerings = append(offerings,
			scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeOnDemand, Price: price, Available: true},
			scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeSpot, Price: price * spotFactor, Available: true})
	}
	res := scheduling.Resources{CPU: cpu * 1000, Memory: cpu * 4 << 30, Pods: 110}
	return scheduling.NewInstanceType(name, map[string]string{scheduling.LabelArch: arch, scheduling.LabelOS: "linux"}, res, res, offerings)
}

// testClass is a ready class with subnets in us-east-1a and us-east-1b, an amd64 and an arm64 AMI, and
// the given instance types.
func testClass(types ...*scheduling.InstanceType) *readyClass {
	rc := &readyClass{
		nc: &apis.EC2NodeClass{},
		resolved: nodeclass.Resolution{Ready: true, Status: apis.EC2NodeClassStatus{AMIs: []apis.AMIStatus{
			{ID: "ami-amd64", Requirements: []corev1.NodeSelectorRequirement{{Key: scheduling.LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}},
			{ID: "ami-arm64", Requirements: []corev1.NodeSelectorRequirement{{Key: scheduling.LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}},
		}}},
		subnets: map[string]nodeclass.Subnet{"us-east-1a": {ID: "subnet-a", Zone: "us-east-1a"}, "us-east-1b": {ID: "subnet-b", Zone: "us-east-1b"}},
		types:   types,
		byName:  map[string]*scheduling.InstanceType{},
	}
	rc.nc.Name = "default"
	for _, it := range types {
		rc.byName[it.Name] = it
	}
	return rc
}

// fakeTemplates names a template after its image and capacity type and remembers what it was asked.
type fakeTemplates struct {
	mu   sync.Mutex // runs launch batches concurrently
	made []launchtemplate.Template
	err  error
}

func (f *fakeTemplates) Ensure(_ context.Context, t launchtemplate.Template) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.made = append(f.made, t)
	return fmt.Sprintf("lt-%s-%s", t.ImageID, t.Options.Labels[apis.CapacityTypeLabelKey]), nil
}

// spotFactor prices spot offerings against on-demand (a variable, so expected prices are computed the
// same way at run time).
var spotFactor = 0.4
