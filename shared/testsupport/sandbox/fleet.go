package sandbox

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/nodewright/nodewright/shared/adapters/instance"
)

// Launch is one CreateFleet call the provisioner made.
type Launch struct {
	Claim        string
	NodePool     string
	At           time.Time // when the call was made
	Answered     time.Time // when EC2's answer (or the error) came back
	InstanceIDs  []string
	InstanceType string
	Zone         string
	Err          error
}

// fleetWatch is EC2 as the provisioner sees it, with every CreateFleet call noted (the scenarios measure
// pending-to-launch with it) and, for the crash test, a crash right after a chosen call succeeded.
type fleetWatch struct {
	*ec2.Client
	mu       sync.Mutex
	launches []Launch
	onLaunch func(Launch)
	// crashAfter makes the next successful CreateFleet panic once it has returned, as if the process
	// died between EC2's answer and the claim update.
	crashAfter bool
}

var _ instance.EC2API = (*fleetWatch)(nil)

// CrashedAfterCreateFleet is the panic value of an injected crash.
const CrashedAfterCreateFleet = "injected crash after CreateFleet"

func (f *fleetWatch) CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, optFns ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error) {
	l := Launch{At: time.Now()}
	for _, ts := range in.TagSpecifications {
		for _, t := range ts.Tags {
			switch aws.ToString(t.Key) {
			case instance.TagNodeClaim:
				l.Claim = aws.ToString(t.Value)
			case instance.TagBatch: // a batched launch: its instances get their claim tags afterwards
				l.Claim = "batch " + aws.ToString(t.Value)
			case instance.TagNodePool:
				l.NodePool = aws.ToString(t.Value)
			}
		}
	}
	out, err := f.Client.CreateFleet(ctx, in, optFns...)
	l.Answered, l.Err = time.Now(), err
	if err == nil {
		for _, i := range out.Instances {
			l.InstanceIDs = append(l.InstanceIDs, i.InstanceIds...)
			l.InstanceType = string(i.InstanceType)
			if i.LaunchTemplateAndOverrides != nil && i.LaunchTemplateAndOverrides.Overrides != nil {
				l.Zone = aws.ToString(i.LaunchTemplateAndOverrides.Overrides.AvailabilityZone)
			}
		}
	}
	f.mu.Lock()
	f.launches = append(f.launches, l)
	crash := f.crashAfter && err == nil && len(l.InstanceIDs) > 0
	if crash {
		f.crashAfter = false
	}
	f.mu.Unlock()
	if f.onLaunch != nil {
		f.onLaunch(l)
	}
	if crash {
		panic(CrashedAfterCreateFleet)
	}
	return out, err
}

// Launches returns the calls so far.
func (f *fleetWatch) Launches() []Launch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Launch(nil), f.launches...)
}

// CrashAfterNextLaunch arms the injected crash.
func (f *fleetWatch) CrashAfterNextLaunch() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashAfter = true
}
