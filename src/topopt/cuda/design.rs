//! [`DesignBackend`] for [`CudaBackend`]: launchers of
//! `kernels/topopt_design.cu` (every launch checked). The filter keeps its
//! normalization Hₑ on the device (computed once per radius on the host by
//! [`DensityFilter`], whose stencil the kernels rebuild from rmin); the mask
//! is one byte per element (0 design, 1 solid, 2 void). The moduli go
//! straight into the operator's Eₑ (f64 and f32), the element energies stay
//! on the device, and each scalar is reduced into a slot.

use super::CudaElastic;
use crate::backend::cuda::launch::{driver_err, rows_config, slot};
use crate::backend::cuda::{same_len, CudaBackend, KernelFamily};
use crate::backend::BackendError;
use crate::topopt::design::{DesignBackend, DesignMap, Fields, OcTrial};
use crate::topopt::filter::DensityFilter;
use crate::topopt::mesh::Mesh;
use crate::topopt::problem::Passive;
use crate::topopt::projection::ETA;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/topopt_design.cu`, compiled when the first filter is made.
pub static TOPOPT_DESIGN: KernelFamily = KernelFamily {
    file: "topopt_design.cu",
    source: include_str!("../../../kernels/topopt_design.cu"),
    entry_points: &[
        "tdes_physical",
        "tdes_sum",
        "tdes_max_abs_diff",
        "tdes_sens",
        "tdes_gather2",
        "tdes_oc_root",
        "tdes_oc_trial",
        "tdes_volume",
    ],
};

/// The density filter on the device.
pub struct CudaFilter {
    h: CudaSlice<f64>,
    rmin: f64,
    /// ceil(rmin): the stencil's reach.
    reach: i32,
    dims: [i32; 3],
    n: usize,
}

/// tanh βη and tanh βη + tanh β(1 − η) of the projection.
fn projection_consts(beta: f64) -> (f64, f64) {
    let a = (beta * ETA).tanh();
    (a, a + (beta * (1.0 - ETA)).tanh())
}

impl CudaBackend {
    fn tdes_sum(
        &self,
        a: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        mode: i32,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(a.len(), b.len())?;
        let out = slot(s, out)?;
        const NAME: &str = "tdes_sum";
        let f = self.kernel(&TOPOPT_DESIGN, NAME)?;
        let red = self.reduce_scratch();
        let n = a.len() as i64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(a).arg(b).arg(&n).arg(&mode);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&out);
        // SAFETY: a, b of n; the reduction grid of n.
        unsafe { self.run(NAME, &mut args, red.config(a.len())) }
    }
}

impl DesignBackend for CudaBackend {
    type Filter = CudaFilter;
    type Mask = CudaSlice<u8>;

    fn design_filter(&self, mesh: &Mesh, rmin: f64) -> Result<CudaFilter, BackendError> {
        self.load(&TOPOPT_DESIGN)?;
        let host = DensityFilter::new(*mesh, rmin);
        let h = self
            .stream()
            .clone_htod(host.row_sums_h())
            .map_err(|e| driver_err("uploading the filter's row sums", e))?;
        Ok(CudaFilter {
            h,
            rmin,
            reach: rmin.ceil() as i32,
            dims: [mesh.nelx, mesh.nely, mesh.nelz].map(|v| v as i32),
            n: mesh.elements(),
        })
    }

    fn design_mask(&self, passive: &[Passive]) -> Result<CudaSlice<u8>, BackendError> {
        let m: Vec<u8> = (passive.iter())
            .map(|p| match p {
                Passive::Design => 0,
                Passive::Solid => 1,
                Passive::Void => 2,
            })
            .collect();
        self.stream()
            .clone_htod(&m)
            .map_err(|e| driver_err("uploading the passive mask", e))
    }

    fn design_physical(
        &self,
        map: &DesignMap<'_, Self>,
        x: &CudaSlice<f64>,
        fl: &mut Fields<CudaSlice<f64>>,
        op: &mut CudaElastic,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let (flt, mask, beta, penal) = (map.filter, map.mask, map.beta, map.penal);
        for len in [x.len(), mask.len(), fl.rho.len(), op.e64.len()] {
            same_len(flt.n, len)?;
        }
        let o = slot(s, out)?;
        slot(s, out + 1)?;
        const NAME: &str = "tdes_physical";
        let f = self.kernel(&TOPOPT_DESIGN, NAME)?;
        let red = self.reduce_scratch();
        let (pa, pd) = projection_consts(beta);
        let n = flt.n as i64;
        let [nx, ny, nz] = flt.dims;
        let mut args = self.stream().launch_builder(&f);
        args.arg(x).arg(&flt.h).arg(mask);
        args.arg(&mut fl.filtered)
            .arg(&mut fl.rho)
            .arg(&mut fl.slope);
        args.arg(&mut op.e64).arg(&mut op.e32);
        args.arg(&n)
            .arg(&nx)
            .arg(&ny)
            .arg(&nz)
            .arg(&flt.reach)
            .arg(&flt.rmin);
        args.arg(&beta).arg(&pa).arg(&pd).arg(&penal);
        args.arg(&red.partials)
            .arg(&red.ticket)
            .arg(&mut *s)
            .arg(&o);
        // SAFETY: every field and mask of n elements (checked); reduction grid of n.
        unsafe { self.run(NAME, &mut args, red.config(flt.n))? };
        // s[out + 1] = Σ ρ̄(1 − ρ̄)
        self.tdes_sum(&fl.rho, &fl.rho, 0, s, out + 1)
    }

    fn design_sensitivities(
        &self,
        map: &DesignMap<'_, Self>,
        u: &CudaSlice<f64>,
        fl: &mut Fields<CudaSlice<f64>>,
        op: &mut CudaElastic,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let (flt, penal) = (map.filter, map.penal);
        same_len(op.mesh.dofs(), u.len())?;
        for len in [fl.rho.len(), fl.dc.len(), fl.staged[0].len(), op.e64.len()] {
            same_len(flt.n, len)?;
        }
        let o = slot(s, out)?;
        self.topo_energies_device(op, u)?;
        let c = op.energies.as_ref().expect("computed above");
        let red = self.reduce_scratch();
        let n = flt.n as i64;
        let count = flt.n as f64;
        let [t0, t1] = &mut fl.staged;
        {
            const NAME: &str = "tdes_sens";
            let f = self.kernel(&TOPOPT_DESIGN, NAME)?;
            let mut args = self.stream().launch_builder(&f);
            args.arg(c)
                .arg(&op.e64)
                .arg(&fl.rho)
                .arg(&fl.slope)
                .arg(&flt.h);
            args.arg(&mut *t0)
                .arg(&mut *t1)
                .arg(&n)
                .arg(&penal)
                .arg(&count);
            args.arg(&red.partials)
                .arg(&red.ticket)
                .arg(&mut *s)
                .arg(&o);
            // SAFETY: every array of n elements (checked); reduction grid of n.
            unsafe { self.run(NAME, &mut args, red.config(flt.n))? };
        }
        const NAME: &str = "tdes_gather2";
        let f = self.kernel(&TOPOPT_DESIGN, NAME)?;
        let [nx, ny, nz] = flt.dims;
        let mut args = self.stream().launch_builder(&f);
        args.arg(&*t0).arg(&*t1).arg(&mut fl.dc).arg(&mut fl.dv);
        args.arg(&n)
            .arg(&nx)
            .arg(&ny)
            .arg(&nz)
            .arg(&flt.reach)
            .arg(&flt.rmin);
        // SAFETY: every array of n elements (checked).
        unsafe { self.run(NAME, &mut args, rows_config(flt.n)) }
    }

    fn oc_prepare(
        &self,
        mask: &CudaSlice<u8>,
        fl: &mut Fields<CudaSlice<f64>>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let nel = fl.root.len();
        for len in [mask.len(), fl.dc.len(), fl.dv.len()] {
            same_len(nel, len)?;
        }
        let o = slot(s, out)?;
        const NAME: &str = "tdes_oc_root";
        let f = self.kernel(&TOPOPT_DESIGN, NAME)?;
        let red = self.reduce_scratch();
        let n = nel as i64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(&fl.dc)
            .arg(&fl.dv)
            .arg(mask)
            .arg(&mut fl.root)
            .arg(&n);
        args.arg(&red.partials)
            .arg(&red.ticket)
            .arg(&mut *s)
            .arg(&o);
        // SAFETY: every array of n elements (checked); reduction grid of n.
        unsafe { self.run(NAME, &mut args, red.config(nel))? };
        // s[out + 1] = #{root > 0}: the design elements with ratio > 0.
        self.tdes_sum(&fl.root, &fl.root, 2, s, out + 1)
    }

    fn oc_trial(
        &self,
        map: &DesignMap<'_, Self>,
        t: OcTrial<'_, CudaSlice<f64>>,
        x_new: &mut CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let (flt, x, root) = (map.filter, t.x, t.root);
        let (scale, move_limit) = (t.scale, t.move_limit);
        for len in [x.len(), root.len(), x_new.len()] {
            same_len(flt.n, len)?;
        }
        const NAME: &str = "tdes_oc_trial";
        let f = self.kernel(&TOPOPT_DESIGN, NAME)?;
        let n = flt.n as i64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(x)
            .arg(root)
            .arg(&mut *x_new)
            .arg(&n)
            .arg(&scale)
            .arg(&move_limit);
        // SAFETY: every array of n elements (checked).
        unsafe { self.run(NAME, &mut args, rows_config(flt.n))? };
        self.design_volume(map, x_new, s, out)
    }

    fn design_volume(
        &self,
        map: &DesignMap<'_, Self>,
        y: &CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let (flt, mask, beta) = (map.filter, map.mask, map.beta);
        same_len(flt.n, y.len())?;
        same_len(flt.n, mask.len())?;
        let o = slot(s, out)?;
        const NAME: &str = "tdes_volume";
        let f = self.kernel(&TOPOPT_DESIGN, NAME)?;
        let red = self.reduce_scratch();
        let (pa, pd) = projection_consts(beta);
        let n = flt.n as i64;
        let [nx, ny, nz] = flt.dims;
        let mut args = self.stream().launch_builder(&f);
        args.arg(y).arg(&flt.h).arg(mask);
        args.arg(&n)
            .arg(&nx)
            .arg(&ny)
            .arg(&nz)
            .arg(&flt.reach)
            .arg(&flt.rmin);
        args.arg(&beta).arg(&pa).arg(&pd);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&o);
        // SAFETY: y, mask of n elements (checked); reduction grid of n.
        unsafe { self.run(NAME, &mut args, red.config(flt.n)) }
    }

    fn max_abs_diff(
        &self,
        a: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(a.len(), b.len())?;
        let o = slot(s, out)?;
        const NAME: &str = "tdes_max_abs_diff";
        let f = self.kernel(&TOPOPT_DESIGN, NAME)?;
        let red = self.reduce_scratch();
        let n = a.len() as i64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(a).arg(b).arg(&n);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&o);
        // SAFETY: a, b of n; reduction grid of n.
        unsafe { self.run(NAME, &mut args, red.config(a.len())) }
    }
}
