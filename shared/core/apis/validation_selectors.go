package apis

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// This file holds the EC2NodeClass rules for the terms that select AWS resources (subnets, security
// groups, capacity reservations, placement group, AMIs): each term needs something to select by, ids are
// exclusive with other fields, ids follow their EC2 pattern, and tag maps have no empty keys or values.

func validateSelectorTags(tags map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(tags) > maxSelectorTags {
		errs = append(errs, field.TooMany(path, len(tags), maxSelectorTags))
	}
	for _, k := range sortedKeys(tags) {
		if k == "" || tags[k] == "" {
			errs = append(errs, field.Invalid(path.Key(k), tags[k], emptyTagMessage))
		}
	}
	return errs
}

func validateTermCount(n int, path *field.Path, required bool, what string) field.ErrorList {
	if n == 0 && required {
		return field.ErrorList{field.Required(path, what+" cannot be empty")}
	}
	if n > maxSelectorTerms {
		return field.ErrorList{field.TooMany(path, n, maxSelectorTerms)}
	}
	return nil
}

func validateSubnetTerms(terms []SubnetSelectorTerm, path *field.Path) field.ErrorList {
	errs := validateTermCount(len(terms), path, true, "subnetSelectorTerms")
	for i, t := range terms {
		p := path.Index(i)
		switch {
		case t.Tags == nil && t.ID == "":
			errs = append(errs, field.Required(p, "expected at least one, got none, ['tags', 'id']"))
		case t.ID != "" && t.Tags != nil:
			errs = append(errs, field.Forbidden(p.Child("id"), "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term"))
		}
		if t.ID != "" {
			errs = append(errs, validatePattern(p.Child("id"), t.ID, subnetIDPattern)...)
		}
		errs = append(errs, validateSelectorTags(t.Tags, p.Child("tags"))...)
	}
	return errs
}

func validateSecurityGroupTerms(terms []SecurityGroupSelectorTerm, path *field.Path) field.ErrorList {
	errs := validateTermCount(len(terms), path, true, "securityGroupSelectorTerms")
	for i, t := range terms {
		p := path.Index(i)
		switch {
		case t.Tags == nil && t.ID == "" && t.Name == "":
			errs = append(errs, field.Required(p, "expected at least one, got none, ['tags', 'id', 'name']"))
		case t.ID != "" && (t.Tags != nil || t.Name != ""):
			errs = append(errs, field.Forbidden(p.Child("id"), "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"))
		case t.Name != "" && t.Tags != nil:
			errs = append(errs, field.Forbidden(p.Child("name"), "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"))
		}
		if t.ID != "" {
			errs = append(errs, validatePattern(p.Child("id"), t.ID, securityGroupIDPattern)...)
		}
		errs = append(errs, validateSelectorTags(t.Tags, p.Child("tags"))...)
	}
	return errs
}

func validateCapacityReservationTerms(terms []CapacityReservationSelectorTerm, path *field.Path) field.ErrorList {
	errs := validateTermCount(len(terms), path, false, "capacityReservationSelectorTerms")
	for i, t := range terms {
		p := path.Index(i)
		switch {
		case t.Tags == nil && t.ID == "" && t.InstanceMatchCriteria == "":
			errs = append(errs, field.Required(p, "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']"))
		case t.ID != "" && (t.Tags != nil || t.OwnerID != "" || t.InstanceMatchCriteria != ""):
			errs = append(errs, field.Forbidden(p.Child("id"), "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term"))
		}
		if t.ID != "" {
			errs = append(errs, validatePattern(p.Child("id"), t.ID, capacityReservationIDPattern)...)
		}
		if t.OwnerID != "" {
			errs = append(errs, validatePattern(p.Child("ownerID"), t.OwnerID, ownerIDPattern)...)
		}
		if t.InstanceMatchCriteria != "" {
			errs = append(errs, validateEnum(p.Child("instanceMatchCriteria"), t.InstanceMatchCriteria, instanceMatchCriteria)...)
		}
		errs = append(errs, validateSelectorTags(t.Tags, p.Child("tags"))...)
	}
	return errs
}

func validatePlacementGroup(pg *PlacementGroupSelector, path *field.Path) field.ErrorList {
	if pg == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case pg.Name == nil && pg.ID == nil:
		errs = append(errs, field.Required(path, "expected at least one, got none, ['name', 'id']"))
	case pg.Name != nil && pg.ID != nil:
		errs = append(errs, field.Forbidden(path.Child("id"), "'name' and 'id' are mutually exclusive"))
	}
	if pg.Name != nil && *pg.Name == "" {
		errs = append(errs, field.Invalid(path.Child("name"), "", "should be at least 1 chars long"))
	}
	if pg.ID != nil {
		errs = append(errs, validatePattern(path.Child("id"), *pg.ID, placementGroupIDPattern)...)
	}
	return errs
}

func validateAMI(s *EC2NodeClassSpec, spec *field.Path) field.ErrorList {
	path := spec.Child("amiSelectorTerms")
	errs := validateTermCount(len(s.AMISelectorTerms), path, true, "amiSelectorTerms")
	aliasFamily := ""
	for i, t := range s.AMISelectorTerms {
		p := path.Index(i)
		others := t.Tags != nil || t.Name != "" || t.Owner != ""
		switch {
		case t.Tags == nil && t.ID == "" && t.Name == "" && t.Alias == "" && t.SSMParameter == "":
			errs = append(errs, field.Required(p, "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']"))
		case t.ID != "" && (t.Alias != "" || others):
			errs = append(errs, field.Forbidden(p.Child("id"), "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"))
		case t.Alias != "" && others:
			errs = append(errs, field.Forbidden(p.Child("alias"), "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"))
		}
		if t.ID != "" {
			errs = append(errs, validatePattern(p.Child("id"), t.ID, amiIDPattern)...)
		}
		if t.Alias != "" {
			if len(s.AMISelectorTerms) != 1 {
				errs = append(errs, field.Forbidden(p.Child("alias"), "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms"))
			}
			aliasErrs := validateAlias(t.Alias, p.Child("alias"))
			errs = append(errs, aliasErrs...)
			if len(aliasErrs) == 0 && aliasFamily == "" {
				a, _ := ParseAlias(t.Alias)
				aliasFamily = a.Family
			}
		}
		errs = append(errs, validateSelectorTags(t.Tags, p.Child("tags"))...)
	}
	familyPath := spec.Child("amiFamily")
	hasAlias := slices.ContainsFunc(s.AMISelectorTerms, func(t AMISelectorTerm) bool { return t.Alias != "" })
	switch {
	case s.AMIFamily == nil && !hasAlias:
		errs = append(errs, field.Required(familyPath, "must specify amiFamily if amiSelectorTerms does not contain an alias"))
	case s.AMIFamily == nil:
	case !slices.Contains(AMIFamilies, *s.AMIFamily):
		errs = append(errs, field.NotSupported(familyPath, *s.AMIFamily, AMIFamilies))
	case aliasFamily != "" && *s.AMIFamily != aliasFamily && *s.AMIFamily != AMIFamilyCustom:
		errs = append(errs, field.Invalid(familyPath, *s.AMIFamily, fmt.Sprintf("if set, amiFamily must be '%s' or 'Custom' when using an %s alias", aliasFamily, aliasFamily)))
	}
	return errs
}

func validateAlias(alias string, path *field.Path) field.ErrorList {
	if len(alias) > maxAliasLength {
		return field.ErrorList{field.TooLong(path, alias, maxAliasLength)}
	}
	if !aliasPattern.MatchString(alias) {
		return field.ErrorList{field.Invalid(path, alias, "'alias' is improperly formatted, must match the format 'family@version'")}
	}
	family, version, _ := strings.Cut(alias, "@")
	if !slices.Contains(aliasFamilyNames, family) {
		return field.ErrorList{field.Invalid(path, alias, "family is not supported, must be one of the following: "+quoteJoin(aliasFamilyNames))}
	}
	if slices.Contains(windowsAliasFamilyName, family) && version != AliasVersionLatest {
		return field.ErrorList{field.Invalid(path, alias, "windows families may only specify version 'latest'")}
	}
	return nil
}
