package mirror

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CustomResourceDefinition shape, written out for the fields the mirrors use (apiextensions.k8s.io/v1);
// the project does not depend on the apiextensions module for three objects it only prints and applies.
type (
	// CRD is an apiextensions.k8s.io/v1 CustomResourceDefinition.
	CRD struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              CRDSpec `json:"spec"`
	}
	// CRDSpec is a CRD's spec.
	CRDSpec struct {
		Group    string       `json:"group"`
		Names    CRDNames     `json:"names"`
		Scope    string       `json:"scope"`
		Versions []CRDVersion `json:"versions"`
	}
	// CRDNames are a CRD's names.
	CRDNames struct {
		Kind       string   `json:"kind"`
		ListKind   string   `json:"listKind"`
		Plural     string   `json:"plural"`
		Singular   string   `json:"singular"`
		ShortNames []string `json:"shortNames,omitempty"`
		Categories []string `json:"categories,omitempty"`
	}
	// CRDVersion is one served version.
	CRDVersion struct {
		Name                     string          `json:"name"`
		Served                   bool            `json:"served"`
		Storage                  bool            `json:"storage"`
		Schema                   CRDSchema       `json:"schema"`
		Subresources             CRDSubresources `json:"subresources"`
		AdditionalPrinterColumns []PrinterColumn `json:"additionalPrinterColumns,omitempty"`
	}
	// CRDSchema holds the version's OpenAPI schema.
	CRDSchema struct {
		OpenAPIV3Schema Schema `json:"openAPIV3Schema"`
	}
	// Schema is the part of a structural schema the mirrors use.
	Schema struct {
		Type                  string            `json:"type"`
		Description           string            `json:"description,omitempty"`
		Properties            map[string]Schema `json:"properties,omitempty"`
		PreserveUnknownFields bool              `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	}
	// CRDSubresources turns on the status subresource.
	CRDSubresources struct {
		Status *struct{} `json:"status,omitempty"`
	}
	// PrinterColumn is a column of `kubectl get` (and of every Table request).
	PrinterColumn struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		JSONPath string `json:"jsonPath"`
		Priority int32  `json:"priority,omitempty"`
	}
)

// Printer columns: Karpenter's columns of the same kinds (names and JSONPaths); priority 1 shows with -o wide.
var (
	readyColumn = PrinterColumn{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`}
	ageColumn   = PrinterColumn{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}

	nodeClaimColumns = []PrinterColumn{
		{Name: "Type", Type: "string", JSONPath: `.metadata.labels.node\.kubernetes\.io/instance-type`},
		{Name: "Capacity", Type: "string", JSONPath: `.metadata.labels.karpenter\.sh/capacity-type`},
		{Name: "Zone", Type: "string", JSONPath: `.metadata.labels.topology\.kubernetes\.io/zone`},
		{Name: "Node", Type: "string", JSONPath: ".status.nodeName"},
		readyColumn, ageColumn,
		{Name: "ImageID", Type: "string", JSONPath: ".status.imageID", Priority: 1},
		{Name: "ID", Type: "string", JSONPath: ".status.providerID", Priority: 1},
		{Name: "NodePool", Type: "string", JSONPath: `.metadata.labels.karpenter\.sh/nodepool`, Priority: 1},
		{Name: "NodeClass", Type: "string", JSONPath: ".spec.nodeClassRef.name", Priority: 1},
		{Name: "Drifted", Type: "string", JSONPath: `.status.conditions[?(@.type=="Drifted")].status`, Priority: 1},
	}
	nodePoolColumns = []PrinterColumn{
		{Name: "NodeClass", Type: "string", JSONPath: ".spec.template.spec.nodeClassRef.name"},
		{Name: "Nodes", Type: "string", JSONPath: ".status.nodes"},
		readyColumn, ageColumn,
		{Name: "Weight", Type: "integer", JSONPath: ".spec.weight", Priority: 1},
		{Name: "CPU", Type: "string", JSONPath: ".status.resources.cpu", Priority: 1},
		{Name: "Memory", Type: "string", JSONPath: ".status.resources.memory", Priority: 1},
	}
	ec2NodeClassColumns = []PrinterColumn{
		readyColumn, ageColumn,
		{Name: "Role", Type: "string", JSONPath: ".spec.role", Priority: 1},
	}
)

// CRDs are the three mirror CustomResourceDefinitions, NodeClaim, NodePool, EC2NodeClass: what `nodewright
// manifests` prints before the policy that keeps them read-only.
func CRDs() []*CRD {
	return []*CRD{
		crd(NodeClaims, nodeClaimColumns, "A mirror of one of Nodewright's node claims, written by its functions; read-only."),
		crd(NodePools, nodePoolColumns, "A mirror of one of Nodewright's NodePools, written by its functions; read-only."),
		crd(EC2NodeClasses, ec2NodeClassColumns, "A mirror of one of Nodewright's EC2NodeClasses, written by its functions; read-only."),
	}
}

// crd builds one kind's CRD. The schema keeps spec and status as they are written (the functions validate
// what they mirror: the configuration was validated before it was stored); the printer columns read them.
func crd(k Kind, columns []PrinterColumn, description string) *CRD {
	free := Schema{Type: "object", PreserveUnknownFields: true}
	return &CRD{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: k.Plural + "." + Group, Labels: map[string]string{"app.kubernetes.io/name": "nodewright", "app.kubernetes.io/managed-by": "nodewright"}},
		Spec: CRDSpec{
			Group: Group,
			Names: CRDNames{Kind: k.Kind, ListKind: k.ListKind, Plural: k.Plural, Singular: k.Singular, ShortNames: k.ShortNames,
				Categories: []string{Category}},
			Scope: "Cluster",
			Versions: []CRDVersion{{
				Name: Version, Served: true, Storage: true,
				Schema: CRDSchema{OpenAPIV3Schema: Schema{Type: "object", Description: description,
					Properties: map[string]Schema{"spec": free, "status": free}}},
				Subresources:             CRDSubresources{Status: &struct{}{}},
				AdditionalPrinterColumns: columns,
			}},
		},
	}
}
