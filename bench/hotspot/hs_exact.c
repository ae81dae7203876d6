/* NOT HotSpot code: a conjugate-gradient solve of exactly the network that
 * single_iteration_steady_grid/_pack relax (same find_res, same package
 * R's), to measure how far HotSpot's Gauss-Seidel stop (max change per
 * sweep < 1e-6 K) is from that network's exact solution. Included at the
 * end of temperature_grid.c when built with -DHS_EXACT. */
static double hs_cell_csum_wsum(grid_model_t *model, grid_model_vector_t *temp,
                                int n, int i, int j, int with_amb, double *wsum_out)
{
  double ***v = temp->cuboid;
  thermal_config_t *c = &model->config;
  layer_t *l = model->layers;
  int nl = model->n_layers, nr = model->rows, nc = model->cols;
  int spidx = nl - DEFAULT_PACK_LAYERS + LAYER_SP;
  int hsidx = nl - DEFAULT_PACK_LAYERS + LAYER_SINK;
  double amb = with_amb ? c->ambient : 0.0;
  double csum = NC(l,n,i,j,nl,nr,nc) + SC(l,n,i,j,nl,nr,nc) +
    EC(l,n,i,j,nl,nr,nc) + WC(l,n,i,j,nl,nr,nc) +
    AC(l,n,i,j,nl,nr,nc) + BC(l,n,i,j,nl,nr,nc);
  double wsum = NT(l,v,n,i,j,nl,nr,nc) + ST(l,v,n,i,j,nl,nr,nc) +
    ET(l,v,n,i,j,nl,nr,nc) + WT(l,v,n,i,j,nl,nr,nc) +
    AT(l,v,n,i,j,nl,nr,nc) + BT(l,v,n,i,j,nl,nr,nc);
  if (n == spidx) {
    double ry = l[n].ry/2.0 + nc*model->pack.r_sp1_y, rx = l[n].rx/2.0 + nr*model->pack.r_sp1_x;
    if (i == 0) { csum += 1.0/ry; wsum += temp->extra[SP_N]/ry; }
    if (i == nr-1) { csum += 1.0/ry; wsum += temp->extra[SP_S]/ry; }
    if (j == nc-1) { csum += 1.0/rx; wsum += temp->extra[SP_E]/rx; }
    if (j == 0) { csum += 1.0/rx; wsum += temp->extra[SP_W]/rx; }
  } else if (n == hsidx) {
    double ry = l[n].ry/2.0 + nc*model->pack.r_hs1_y, rx = l[n].rx/2.0 + nr*model->pack.r_hs1_x;
    /* HS_FIX_SINK=2: also take the sink node at mid-thickness on its
     * ambient side (half the sink's conduction, not all of it) */
    double ramb = l[n].rz;
    if (getenv("HS_FIX_SINK") && atoi(getenv("HS_FIX_SINK")) == 2)
      ramb -= getr(l[n].k, l[n].thickness, (model->width/model->cols)*(model->height/model->rows)) / 2.0;
    csum += 1.0/ramb; wsum += amb/ramb;
    if (i == 0) { csum += 1.0/ry; wsum += temp->extra[SINK_C_N]/ry; }
    if (i == nr-1) { csum += 1.0/ry; wsum += temp->extra[SINK_C_S]/ry; }
    if (j == nc-1) { csum += 1.0/rx; wsum += temp->extra[SINK_C_E]/rx; }
    if (j == 0) { csum += 1.0/rx; wsum += temp->extra[SINK_C_W]/rx; }
  }
  *wsum_out = wsum;
  return csum;
}

/* r = b - A t (with_amb = 1) or -A t without the ambient part (with_amb = 0)
 * plus power when with_amb; grid cells then the 12 package nodes */
static void hs_residual(grid_model_t *model, grid_model_vector_t *power,
                        grid_model_vector_t *t, double *r, int with_amb)
{
  int n, i, j, k = 0;
  int nl = model->n_layers, nr = model->rows, nc = model->cols;
  int spidx = nl - DEFAULT_PACK_LAYERS + LAYER_SP;
  int hsidx = nl - DEFAULT_PACK_LAYERS + LAYER_SINK;
  package_RC_t *pk = &model->pack;
  layer_t *l = model->layers;
  double *v = t->extra, amb = with_amb ? model->config.ambient : 0.0, csum, wsum, s;
  for (n = 0; n < nl; n++) for (i = 0; i < nr; i++) for (j = 0; j < nc; j++, k++) {
    csum = hs_cell_csum_wsum(model, t, n, i, j, with_amb, &wsum);
    r[k] = (with_amb ? power->cuboid[n][i][j] : 0.0) + wsum - csum * t->cuboid[n][i][j];
  }
  /* sink outer */
  csum = 1.0/(pk->r_hs_per + pk->r_amb_per) + 1.0/(pk->r_hs2_y + pk->r_hs);
  r[k+SINK_N] = amb/(pk->r_hs_per + pk->r_amb_per) + v[SINK_C_N]/(pk->r_hs2_y + pk->r_hs) - csum*v[SINK_N];
  r[k+SINK_S] = amb/(pk->r_hs_per + pk->r_amb_per) + v[SINK_C_S]/(pk->r_hs2_y + pk->r_hs) - csum*v[SINK_S];
  csum = 1.0/(pk->r_hs_per + pk->r_amb_per) + 1.0/(pk->r_hs2_x + pk->r_hs);
  r[k+SINK_W] = amb/(pk->r_hs_per + pk->r_amb_per) + v[SINK_C_W]/(pk->r_hs2_x + pk->r_hs) - csum*v[SINK_W];
  r[k+SINK_E] = amb/(pk->r_hs_per + pk->r_amb_per) + v[SINK_C_E]/(pk->r_hs2_x + pk->r_hs) - csum*v[SINK_E];
  /* sink inner */
  csum = nc / (l[hsidx].ry / 2.0 + nc * pk->r_hs1_y) + 1.0/(pk->r_hs_c_per_y + pk->r_amb_c_per_y) +
    1.0/pk->r_sp_per_y + 1.0/(pk->r_hs2_y + pk->r_hs);
  for (s = 0, j = 0; j < nc; j++) s += t->cuboid[hsidx][0][j];
  r[k+SINK_C_N] = s/(l[hsidx].ry / 2.0 + nc * pk->r_hs1_y) + amb/(pk->r_hs_c_per_y + pk->r_amb_c_per_y) +
    v[SP_N]/pk->r_sp_per_y + v[SINK_N]/(pk->r_hs2_y + pk->r_hs) - csum*v[SINK_C_N];
  for (s = 0, j = 0; j < nc; j++) s += t->cuboid[hsidx][nr-1][j];
  r[k+SINK_C_S] = s/(l[hsidx].ry / 2.0 + nc * pk->r_hs1_y) + amb/(pk->r_hs_c_per_y + pk->r_amb_c_per_y) +
    v[SP_S]/pk->r_sp_per_y + v[SINK_S]/(pk->r_hs2_y + pk->r_hs) - csum*v[SINK_C_S];
  csum = nr / (l[hsidx].rx / 2.0 + nr * pk->r_hs1_x) + 1.0/(pk->r_hs_c_per_x + pk->r_amb_c_per_x) +
    1.0/pk->r_sp_per_x + 1.0/(pk->r_hs2_x + pk->r_hs);
  for (s = 0, i = 0; i < nr; i++) s += t->cuboid[hsidx][i][0];
  r[k+SINK_C_W] = s/(l[hsidx].rx / 2.0 + nr * pk->r_hs1_x) + amb/(pk->r_hs_c_per_x + pk->r_amb_c_per_x) +
    v[SP_W]/pk->r_sp_per_x + v[SINK_W]/(pk->r_hs2_x + pk->r_hs) - csum*v[SINK_C_W];
  for (s = 0, i = 0; i < nr; i++) s += t->cuboid[hsidx][i][nc-1];
  r[k+SINK_C_E] = s/(l[hsidx].rx / 2.0 + nr * pk->r_hs1_x) + amb/(pk->r_hs_c_per_x + pk->r_amb_c_per_x) +
    v[SP_E]/pk->r_sp_per_x + v[SINK_E]/(pk->r_hs2_x + pk->r_hs) - csum*v[SINK_C_E];
  /* spreader periphery */
  csum = nc / (l[spidx].ry / 2.0 + nc * pk->r_sp1_y) + 1.0/pk->r_sp_per_y;
  for (s = 0, j = 0; j < nc; j++) s += t->cuboid[spidx][0][j];
  r[k+SP_N] = s/(l[spidx].ry / 2.0 + nc * pk->r_sp1_y) + v[SINK_C_N]/pk->r_sp_per_y - csum*v[SP_N];
  for (s = 0, j = 0; j < nc; j++) s += t->cuboid[spidx][nr-1][j];
  r[k+SP_S] = s/(l[spidx].ry / 2.0 + nc * pk->r_sp1_y) + v[SINK_C_S]/pk->r_sp_per_y - csum*v[SP_S];
  csum = nr / (l[spidx].rx / 2.0 + nr * pk->r_sp1_x) + 1.0/pk->r_sp_per_x;
  for (s = 0, i = 0; i < nr; i++) s += t->cuboid[spidx][i][0];
  r[k+SP_W] = s/(l[spidx].rx / 2.0 + nr * pk->r_sp1_x) + v[SINK_C_W]/pk->r_sp_per_x - csum*v[SP_W];
  for (s = 0, i = 0; i < nr; i++) s += t->cuboid[spidx][i][nc-1];
  r[k+SP_E] = s/(l[spidx].rx / 2.0 + nr * pk->r_sp1_x) + v[SINK_C_E]/pk->r_sp_per_x - csum*v[SP_E];
}

/* CG on A t = b, A from hs_residual (A p = -hs_residual(p, no ambient, no power)) */
static void hs_exact_solve(grid_model_t *model, grid_model_vector_t *power, grid_model_vector_t *t)
{
  int N = model->n_layers * model->rows * model->cols + EXTRA, k, it;
  double *x = t->cuboid[0][0];
  double *r = dvector(N), *p = dvector(N), *Ap = dvector(N), rr, rr0, a, b, pAp;
  grid_model_vector_t *pv = new_grid_model_vector(model);
  hs_residual(model, power, t, r, 1);
  for (rr = 0, k = 0; k < N; k++) { p[k] = r[k]; rr += r[k]*r[k]; }
  rr0 = rr;
  for (it = 0; it < 200000 && rr > 1e-28 * rr0; it++) {
    copy_dvector(pv->cuboid[0][0], p, N);
    hs_residual(model, power, pv, Ap, 0);
    for (pAp = 0, k = 0; k < N; k++) { Ap[k] = -Ap[k]; pAp += p[k]*Ap[k]; }
    a = rr / pAp;
    for (b = 0, k = 0; k < N; k++) { x[k] += a*p[k]; r[k] -= a*Ap[k]; b += r[k]*r[k]; }
    for (k = 0; k < N; k++) p[k] = r[k] + (b/rr)*p[k];
    rr = b;
  }
  hs_residual(model, power, t, r, 1);
  for (rr = 0, k = 0; k < N; k++) rr = MAX(rr, fabs(r[k]));
  fprintf(stderr, "HS_EXACT: CG %d iterations, max |b - A t| = %.3e W\n", it, rr);
  free_dvector(r); free_dvector(p); free_dvector(Ap); free_grid_model_vector(pv);
}
