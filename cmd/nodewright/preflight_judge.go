package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
)

// verdict is what preflight says about one item.
type verdict string

const (
	works       verdict = "works"
	warning     verdict = "warning"       // works, with a cost or a condition preflight cannot see
	willNotWork verdict = "will not work" // the deployment cannot work as configured
	notChecked  verdict = "not checked"   // preflight could not read what it needs
)

// finding is preflight's line for one item: the verdict, why, and the context values that fix it.
type finding struct {
	Item    string
	Verdict verdict
	Detail  string
	// Set are the exact key=value context settings to pass with -c, when one fixes the item.
	Set []string
}

func (f finding) line() string {
	s := f.Detail
	if len(f.Set) > 0 {
		s += "; set -c " + strings.Join(f.Set, " -c ")
	}
	return s
}

// judge decides every item from what was read and the settings; it reads nothing itself.
func judge(c clusterFacts, a accountFacts, s preflightSettings) []finding {
	return []finding{
		judgeStatus(c),
		judgeEndpoint(c, s),
		judgeVPCSettings(c, a.VPC, s),
		judgeSubnetEgress(a.VPC, s),
		judgeAuthentication(c),
		judgeIPFamily(c),
		judgeVersion(c),
		judgeEgress(c, s),
		judgeFunctionURLs(a.Region, s),
		judgeConcurrency(a, s),
		judgeSpotRole(a),
		judgeAccessEntries(a),
	}
}

// suggestedVPC are the settings that place the functions beside the control plane: the cluster's own
// subnets (the private ones among them) and its cluster security group, which accepts itself on 443.
func suggestedVPC(c clusterFacts) []string {
	subnets, group := strings.Join(c.SubnetIDs, ","), c.ClusterSecurityGroup
	if subnets == "" {
		subnets = "<the cluster's private subnets>"
	}
	if group == "" {
		group = "<a security group the cluster security group accepts on 443>"
	}
	return []string{ctxSubnets + "=" + subnets, ctxSecurityGroups + "=" + group}
}

func judgeStatus(c clusterFacts) finding {
	f := finding{Item: "cluster", Verdict: works, Detail: fmt.Sprintf("%s is %s", c.Name, c.Status)}
	if c.Status != string(ekstypes.ClusterStatusActive) && c.Status != string(ekstypes.ClusterStatusUpdating) {
		f.Verdict, f.Detail = willNotWork, fmt.Sprintf("%s is %s: the functions need an ACTIVE cluster", c.Name, orDash(c.Status))
	}
	return f
}

// openToAll reports whether a public endpoint accepts every address: EKS's default is 0.0.0.0/0.
func openToAll(cidrs []string) bool {
	if len(cidrs) == 0 {
		return true
	}
	for _, c := range cidrs {
		if c == "0.0.0.0/0" {
			return true
		}
	}
	return false
}

// judgeEndpoint decides whether the functions that call the API server can reach it: from Lambda's own
// network (changing public addresses) or, with vpcSubnetIds, from the cluster's VPC.
func judgeEndpoint(c clusterFacts, s preflightSettings) finding {
	f := finding{Item: "API endpoint"}
	open := c.PublicAccess && openToAll(c.PublicAccessCIDRs)
	inVPC := len(s.SubnetIDs) > 0
	switch {
	case !c.PublicAccess && !c.PrivateAccess:
		f.Verdict, f.Detail = notChecked, "EKS reported neither public nor private endpoint access"
	case !inVPC && open:
		f.Verdict, f.Detail = works, "public endpoint open to all addresses: the functions reach it from outside the VPC"
	case !inVPC && !c.PublicAccess:
		f.Verdict, f.Detail, f.Set = willNotWork, "private endpoint access only: functions outside the cluster's VPC cannot reach the API server", suggestedVPC(c)
	case !inVPC:
		f.Verdict, f.Set = willNotWork, suggestedVPC(c)
		f.Detail = fmt.Sprintf("public endpoint limited by publicAccessCidrs %s: Lambda's changing egress addresses are refused", strings.Join(c.PublicAccessCIDRs, ","))
		if !c.PrivateAccess {
			f.Detail += "; enable private endpoint access too (aws eks update-cluster-config --resources-vpc-config endpointPrivateAccess=true)"
		}
	case c.PrivateAccess:
		f.Verdict, f.Detail = works, "the functions run in the cluster's VPC and reach the private endpoint"
	case s.IsolatedVPC:
		f.Verdict, f.Detail = willNotWork, "public endpoint only, and isolated subnets have no route to it: enable private endpoint access "+
			"(aws eks update-cluster-config --resources-vpc-config endpointPrivateAccess=true)"
	case open:
		f.Verdict, f.Detail = warning, "public endpoint only: the functions in the VPC reach it through the subnets' NAT gateway; "+
			"private endpoint access would keep the calls in the VPC"
	default:
		f.Verdict, f.Detail = warning, fmt.Sprintf("public endpoint only, limited by publicAccessCidrs %s: the functions in the VPC reach it "+
			"through the subnets' NAT gateway, whose address must be in that list; or enable private endpoint access", strings.Join(c.PublicAccessCIDRs, ","))
	}
	return f
}

// judgeVPCSettings checks the VPC context values against each other and against EC2: the subnets and
// security groups exist in the cluster's VPC, and the control plane accepts the groups on 443.
func judgeVPCSettings(c clusterFacts, v vpcFacts, s preflightSettings) finding {
	f := finding{Item: "VPC settings"}
	hasSubnets, hasGroups := len(s.SubnetIDs) > 0, len(s.SecurityGroupIDs) > 0
	switch {
	case !hasSubnets && !hasGroups && !s.VPCEndpoints && !s.IsolatedVPC:
		f.Verdict, f.Detail = works, "none set: the functions run outside any VPC"
		return f
	case !hasSubnets:
		f.Verdict, f.Set = willNotWork, suggestedVPC(c)
		f.Detail = "vpcSecurityGroupIds, vpcEndpoints and isolatedVPC take effect only with vpcSubnetIds"
		return f
	case !hasGroups:
		f.Verdict, f.Set = willNotWork, suggestedVPC(c)[1:]
		f.Detail = "vpcSubnetIds needs vpcSecurityGroupIds: the groups the functions' network interfaces get"
		return f
	case v.Err != nil:
		f.Verdict, f.Detail = notChecked, v.Err.Error()
		return f
	}
	var problems []string
	for _, id := range s.SubnetIDs {
		switch vpc, ok := v.SubnetVPC[id]; {
		case !ok:
			problems = append(problems, "subnet "+id+" does not exist")
		case c.VpcID != "" && vpc != c.VpcID:
			problems = append(problems, fmt.Sprintf("subnet %s is in %s, not the cluster's %s", id, vpc, c.VpcID))
		}
	}
	var unaccepted []string
	for _, id := range s.SecurityGroupIDs {
		switch vpc, ok := v.GroupVPC[id]; {
		case !ok:
			problems = append(problems, "security group "+id+" does not exist")
		case c.VpcID != "" && vpc != c.VpcID:
			problems = append(problems, fmt.Sprintf("security group %s is in %s, not the cluster's %s", id, vpc, c.VpcID))
		case id != c.ClusterSecurityGroup && !v.AcceptedOn443[id]:
			unaccepted = append(unaccepted, id)
		}
	}
	switch {
	case len(problems) > 0:
		f.Verdict, f.Detail = willNotWork, strings.Join(problems, "; ")
	case len(unaccepted) > 0 && len(unaccepted) == len(s.SecurityGroupIDs):
		f.Verdict, f.Detail = warning, fmt.Sprintf("no rule of the cluster's security groups names %s on 443: the API server must accept "+
			"the functions' groups (a CIDR rule may; preflight checks group rules only)", strings.Join(unaccepted, ","))
	case s.IsolatedVPC && !s.VPCEndpoints:
		f.Verdict, f.Set = warning, []string{ctxEndpoints + "=true"}
		f.Detail = "isolated subnets need VPC endpoints for EC2, SQS, DynamoDB, SSM, STS, EKS and CloudWatch Logs, unless the VPC has them already"
	default:
		f.Verdict, f.Detail = works, fmt.Sprintf("%d subnets and %d security groups in the cluster's VPC %s", len(s.SubnetIDs), len(s.SecurityGroupIDs), orDash(c.VpcID))
	}
	return f
}

func judgeAuthentication(c clusterFacts) finding {
	f := finding{Item: "authentication mode"}
	switch c.AuthenticationMode {
	case string(ekstypes.AuthenticationModeApi), string(ekstypes.AuthenticationModeApiAndConfigMap):
		f.Verdict, f.Detail = works, c.AuthenticationMode+": the stack's access entries give the functions their Kubernetes groups"
	case string(ekstypes.AuthenticationModeConfigMap):
		f.Verdict, f.Detail = willNotWork, "CONFIG_MAP has no access entries, which give the functions their Kubernetes identity: "+
			"aws eks update-cluster-config --name "+c.Name+" --access-config authenticationMode=API_AND_CONFIG_MAP"
	case "":
		f.Verdict, f.Detail = notChecked, "EKS reported no authentication mode: the functions' access entries need API or API_AND_CONFIG_MAP"
	default:
		f.Verdict, f.Detail = willNotWork, c.AuthenticationMode+" is not a mode Nodewright knows: its access entries need API or API_AND_CONFIG_MAP"
	}
	return f
}

func judgeIPFamily(c clusterFacts) finding {
	f := finding{Item: "IP family"}
	switch c.IPFamily {
	case "", string(ekstypes.IpFamilyIpv4):
		f.Verdict, f.Detail = works, "ipv4"
	case string(ekstypes.IpFamilyIpv6):
		f.Verdict, f.Detail = works, "ipv6: nodes get the cluster's IPv6 DNS address, user data and max-pods"
	default:
		f.Verdict, f.Detail = willNotWork, c.IPFamily+": Nodewright supports ipv4 and ipv6"
	}
	return f
}

func judgeVersion(c clusterFacts) finding {
	f := finding{Item: "Kubernetes version"}
	major, minorStr, ok := strings.Cut(c.Version, ".")
	minor, err := strconv.Atoi(minorStr)
	if !ok || major != "1" || err != nil {
		f.Verdict, f.Detail = notChecked, fmt.Sprintf("EKS reported version %q", c.Version)
		return f
	}
	supported := fmt.Sprintf("supported: 1.%d to 1.%d", oldestKubernetesMinor, newestTestedKubernetesMinor)
	switch {
	case minor < oldestKubernetesMinor:
		f.Verdict, f.Detail = willNotWork, c.Version+": the webhook registration's matchConditions need 1.30 or later ("+supported+")"
	case minor < watchCacheReadsMinor:
		f.Verdict, f.Detail = warning, c.Version+": warm reads check currency against etcd; from 1.31 the watch cache serves them ("+supported+")"
	case minor > newestTestedKubernetesMinor:
		f.Verdict, f.Detail = warning, c.Version+": newer than the 1.34 client and control plane Nodewright is tested with ("+supported+")"
	default:
		f.Verdict, f.Detail = works, c.Version+" ("+supported+")"
	}
	return f
}

// backstopNote is what a deployment without a reachable webhook still does.
const backstopNote = "pending pods are then found only by the one-minute backstop"

func judgeEgress(c clusterFacts, s preflightSettings) finding {
	f := finding{Item: "control-plane egress"}
	mode := c.EgressMode
	if mode == "" {
		mode = "not reported (AWS_MANAGED)"
	}
	switch {
	case !s.PendingPodWebhook:
		f.Verdict, f.Detail = works, mode+": no webhook is deployed (pendingPodWebhook=false); "+backstopNote
	case c.EgressMode == "" || c.EgressMode == string(ekstypes.ControlPlaneEgressModeTypeAwsManaged):
		f.Verdict, f.Detail = works, mode+": EKS routes the webhook calls to the Function URL"
	case c.EgressMode == string(ekstypes.ControlPlaneEgressModeTypeCustomerRouted):
		f.Verdict, f.Set = warning, []string{ctxWebhook + "=false"}
		f.Detail = "CUSTOMER_ROUTED: webhook calls leave through the cluster's subnets and need a route to the internet " +
			"(Function URLs cannot be reached over PrivateLink); without one " + backstopNote
	default:
		f.Verdict, f.Set = warning, []string{ctxWebhook + "=false"}
		f.Detail = c.EgressMode + ": the API server may have no route to the Function URL; without one " + backstopNote
	}
	return f
}

// judgeFunctionURLs: the stack puts the webhook behind a Function URL; where Lambda has none, creating
// it fails and the whole deploy rolls back, so the webhook must be left out.
func judgeFunctionURLs(region string, s preflightSettings) finding {
	f := finding{Item: "Function URLs"}
	switch {
	case !s.PendingPodWebhook:
		f.Verdict, f.Detail = works, "not needed: pendingPodWebhook=false; "+backstopNote
	case functionURLUnavailable[region]:
		f.Verdict, f.Set = willNotWork, []string{ctxWebhook + "=false"}
		f.Detail = region + " has no Lambda Function URLs (AWS Lambda Developer Guide), so the webhook's URL cannot be created; " +
			"without the webhook " + backstopNote
	default:
		f.Verdict, f.Detail = works, "offered in "+region+" (AWS Lambda Developer Guide)"
	}
	return f
}

// deployed reports whether the cluster already has every function's access entry: the stack exists.
func (a accountFacts) deployed() bool {
	for _, fn := range footprint.Functions() {
		if !a.AccessGroups[fn.Group()] {
			return false
		}
	}
	return true
}

func judgeConcurrency(a accountFacts, s preflightSettings) finding {
	f := finding{Item: "Lambda concurrency"}
	if a.ConcurrencyErr != nil {
		f.Verdict, f.Detail = notChecked, a.ConcurrencyErr.Error()
		return f
	}
	need := workersReservedConcurrency
	if s.PendingPodWebhook {
		need += webhookReservedConcurrency
	}
	free := int(a.UnreservedConcurrency)
	if a.deployed() {
		f.Verdict, f.Detail = works, fmt.Sprintf("%d unreserved; Nodewright is deployed and its %d reserved are already taken", free, need)
		return f
	}
	left := free - need
	switch {
	case left >= lambdaUnreservedMinimum:
		f.Verdict, f.Detail = works, fmt.Sprintf("%d unreserved; the stack reserves %d, leaving %d (Lambda keeps at least %d)", free, need, left, lambdaUnreservedMinimum)
	case s.PendingPodWebhook && free-workersReservedConcurrency >= lambdaUnreservedMinimum:
		f.Verdict, f.Set = willNotWork, []string{ctxWebhook + "=false"}
		f.Detail = fmt.Sprintf("%d unreserved; the stack reserves %d and Lambda keeps %d: raise the account's concurrent executions quota by %d, "+
			"or leave out the webhook's %d", free, need, lambdaUnreservedMinimum, lambdaUnreservedMinimum-left, webhookReservedConcurrency)
	default:
		f.Verdict, f.Detail = willNotWork, fmt.Sprintf("%d unreserved; the stack reserves %d and Lambda keeps %d: raise the account's "+
			"concurrent executions quota (Service Quotas, AWS Lambda) by %d", free, need, lambdaUnreservedMinimum, lambdaUnreservedMinimum-left)
	}
	return f
}

func judgeSpotRole(a accountFacts) finding {
	f := finding{Item: "spot service-linked role"}
	switch {
	case a.SpotRoleErr != nil:
		f.Verdict, f.Detail = notChecked, "iam:GetRole "+spotServiceLinkedRole+": "+a.SpotRoleErr.Error()
	case a.SpotRole:
		f.Verdict, f.Detail = works, spotServiceLinkedRole+" exists"
	default:
		f.Verdict, f.Detail = warning, spotServiceLinkedRole+" is missing, so spot launches fail: "+
			"aws iam create-service-linked-role --aws-service-name spot.amazonaws.com"
	}
	return f
}

func judgeAccessEntries(a accountFacts) finding {
	f := finding{Item: "access entries"}
	var have, missing []string
	for _, fn := range footprint.Functions() {
		if a.AccessGroups[fn.Group()] {
			have = append(have, fn.Group())
		} else {
			missing = append(missing, fn.Group())
		}
	}
	sort.Strings(missing)
	switch {
	case a.AccessNotChecked != "":
		f.Verdict, f.Detail = notChecked, a.AccessNotChecked
	case a.AccessErr != nil:
		f.Verdict, f.Detail = notChecked, a.AccessErr.Error()
	case len(have) == 0:
		f.Verdict, f.Detail = works, "none yet: the stack creates one per function role (groups "+strings.Join(missing, ", ")+")"
	case len(missing) > 0:
		f.Verdict, f.Detail = willNotWork, "the deployed stack's roles lack access entries for "+strings.Join(missing, ", ")+
			": those functions cannot call the API server; redeploy the stack"
	default:
		f.Verdict, f.Detail = works, "every function role has its entry ("+strings.Join(have, ", ")+")"
	}
	return f
}
