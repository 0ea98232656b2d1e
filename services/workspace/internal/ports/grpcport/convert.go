package grpcport

import (
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/liveproctor/workspaces/pkg/apitime"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

func workspaceToProto(w *domain.Workspace) *workspacev1.Workspace {
	address := w.Address()
	pb := &workspacev1.Workspace{
		Typename:           "Workspace",
		Id:                 w.ID(),
		WorkspaceId:        w.ID(),
		Name:               w.Name(),
		Type:               string(w.Type()),
		Address:            &workspacev1.Address{City: address.City, State: address.State, Country: address.Country},
		Products:           productsToProto(w.Products()),
		ObjectiveDocuments: w.ObjectiveDocuments(),
		Tags:               tagsToProto(w.Tags()),
		Sk:                 "workspace",
		SchemaVersion:      domain.SchemaVersion,
		SupportToolId:      w.SupportToolID(),
		CreateTime:         apitime.Format(w.CreatedAt()),
		UpdateTime:         apitime.Format(w.UpdatedAt()),
		Etag:               etag(w.Revision()),
	}
	if parent := w.ParentID(); parent != "" {
		pb.ParentWorkspaceId = wrapperspb.String(parent)
	}
	if w.Deleted() {
		deleted := apitime.Format(w.DeletedAt())
		pb.DeleteTime = &deleted
	}
	if r, ok := w.RateLimit(); ok {
		pb.RateLimit = rateLimitToProto(r)
	}
	return pb
}

func rateLimitToProto(r domain.RateLimit) *workspacev1.RateLimit {
	return &workspacev1.RateLimit{RequestsPerSecond: int32(r.PerSecond), Burst: int32(r.Burst)}
}

// rateLimitFromProto is nil for an absent limit.
func rateLimitFromProto(r *workspacev1.RateLimit) *domain.RateLimit {
	if r == nil {
		return nil
	}
	return &domain.RateLimit{PerSecond: int(r.GetRequestsPerSecond()), Burst: int(r.GetBurst())}
}

func productsToProto(banks []string) []*workspacev1.Product {
	out := make([]*workspacev1.Product, len(banks))
	for i, id := range banks {
		out[i] = &workspacev1.Product{Bank: &workspacev1.Bank{Id: id}}
	}
	return out
}

func productsFromProto(products []*workspacev1.Product) []string {
	out := make([]string, len(products))
	for i, p := range products {
		out[i] = p.GetBank().GetId()
	}
	return out
}

func tagsToProto(tags []domain.Tag) []*workspacev1.Tag {
	out := make([]*workspacev1.Tag, len(tags))
	for i, t := range tags {
		out[i] = &workspacev1.Tag{Key: t.Key, Type: t.Type, Value: t.Value}
	}
	return out
}

func addressFromProto(a *workspacev1.Address) domain.Address {
	return domain.Address{City: a.GetCity(), State: a.GetState(), Country: a.GetCountry()}
}

func createResultToProto(r app.CreateResult) *workspacev1.CreateWorkspaceResponse {
	codes := make([]*workspacev1.RegistrationCode, len(r.RegistrationCodes))
	for i, c := range r.RegistrationCodes {
		codes[i] = &workspacev1.RegistrationCode{Code: c}
	}
	return &workspacev1.CreateWorkspaceResponse{
		WorkspaceId:       r.WorkspaceID,
		Type:              string(r.Type),
		Name:              r.Name,
		RegistrationCodes: codes,
		AppKeys: &workspacev1.AppKeys{
			Lti: &workspacev1.LtiKeys{
				ConsumerKey:      r.LTI.ConsumerKey,
				SharedSecret:     r.LTI.SharedSecret,
				ConfigurationUrl: r.LTI.ConfigurationURL,
				LaunchUrl:        r.LTI.LaunchURL,
			},
			Server: &workspacev1.ServerKeys{ConsumerKey: r.Server.ConsumerKey, SharedSecret: r.Server.SharedSecret},
		},
	}
}
